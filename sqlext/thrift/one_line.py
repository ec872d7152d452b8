"""One-line errors over JDBC from ``sqlext-thriftserver``, with statements still run
asynchronously.

Spark's Thrift server runs a statement in the background (``spark.sql.hive.thriftServer.async``)
and answers the client's status poll with ``StringUtils.stringifyException`` of the failure
(``ThriftCLIService.GetOperationStatus``): the message, the Java stack and every "Caused by".
Spark offers no setting or hook for that text, so the server's Thrift processor is given, once
it is listening, a :class:`java.lang.reflect.Proxy` of its own service whose handler passes every
call through unchanged and cuts the error text of a ``GetOperationStatus`` answer to its first
line, without the Java class name. The handler is a small Java class compiled at start-up by
Janino, the compiler Spark itself ships for its generated code (no jar to build or ship).

Only the client's text changes: the server logs each failure with its whole stack as before
(``SparkExecuteStatementOperation`` logs the failure before the status is asked for), and
cancel, timeouts and every other call reach Spark's service as they did. The binary transport
without Kerberos is covered (Spark's processor for it is ``TSetIpAddressProcessor`` over the
service, which is rebuilt here around the proxy); over the HTTP transport or Kerberos the text
stays Spark's.
"""

from __future__ import annotations

#: the handler's Java source (Janino: Java 7 syntax, no generics needed)
HANDLER_CLASS = "SqlextOneLineErrors"
HANDLER_SOURCE = """
import java.lang.reflect.Field;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.util.Iterator;
import org.apache.hadoop.hive.conf.HiveConf;
import org.apache.hive.service.CompositeService;
import org.apache.hive.service.auth.TSetIpAddressProcessor;
import org.apache.hive.service.cli.thrift.ThriftBinaryCLIService;
import org.apache.hive.service.rpc.thrift.TCLIService;
import org.apache.hive.service.rpc.thrift.TGetOperationStatusResp;
import org.apache.thrift.TProcessorFactory;
import org.apache.thrift.server.TServer;

public class SqlextOneLineErrors implements InvocationHandler {
  private static final String PREFIX = "org.apache.hive.service.cli.HiveSQLException: ";
  private final Object service;

  public SqlextOneLineErrors(Object service) { this.service = service; }

  public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
    Object result;
    try {
      result = method.invoke(service, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
    if (result instanceof TGetOperationStatusResp) {
      TGetOperationStatusResp status = (TGetOperationStatusResp) result;
      if (status.isSetErrorMessage()) {
        status.setErrorMessage(firstLine(status.getErrorMessage()));
      }
    }
    return result;
  }

  public static String firstLine(String text) {
    String line = text.trim();
    int end = line.indexOf('\\n');
    if (end >= 0) line = line.substring(0, end).trim();
    return line.startsWith(PREFIX) ? line.substring(PREFIX.length()) : line;
  }

  /** Proxy the binary Thrift service of a started server; the reason when it cannot. */
  public static String install(CompositeService server) throws Exception {
    Iterator services = server.getServices().iterator();
    while (services.hasNext()) {
      Object service = services.next();
      if (!(service instanceof ThriftBinaryCLIService)) continue;
      ThriftBinaryCLIService cli = (ThriftBinaryCLIService) service;
      String auth = cli.getHiveConf().getVar(HiveConf.ConfVars.HIVE_SERVER2_AUTHENTICATION);
      if ("KERBEROS".equalsIgnoreCase(auth)) return "Kerberos authentication";
      Field serverField = ThriftBinaryCLIService.class.getDeclaredField("server");
      serverField.setAccessible(true);
      TServer thrift = (TServer) serverField.get(cli);
      if (thrift == null) return "the Thrift server is not started";
      TCLIService.Iface proxied = (TCLIService.Iface) Proxy.newProxyInstance(
          TCLIService.Iface.class.getClassLoader(), new Class[] {TCLIService.Iface.class},
          new SqlextOneLineErrors(cli));
      Field factory = TServer.class.getDeclaredField("processorFactory_");
      factory.setAccessible(true);
      factory.set(thrift, new TProcessorFactory(new TSetIpAddressProcessor(proxied)));
      return null;
    }
    return "no binary Thrift service (the HTTP transport)";
  }
}
"""


def handler_class(jvm):
    """The handler class compiled in ``jvm`` (a py4j gateway's ``jvm``) by Spark's Janino."""
    compiler = jvm.org.codehaus.janino.SimpleCompiler()
    compiler.setParentClassLoader(jvm.java.lang.Thread.currentThread().getContextClassLoader())
    compiler.cook(HANDLER_SOURCE)
    return compiler.getClassLoader().loadClass(HANDLER_CLASS)


def one_line_errors(spark, server) -> str | None:
    """Make the started Thrift ``server`` (``HiveThriftServer2`` on ``spark``'s JVM) answer a
    failed statement's status with one line; None when done, else why it was not (the server
    then answers as Spark does)."""
    gateway = spark.sparkContext._gateway
    try:
        install = next(m for m in handler_class(gateway.jvm).getMethods()
                       if m.getName() == "install")
    except Exception as exc:  # noqa: BLE001 - any JVM error: Spark's text stays
        return f"cannot compile the error handler: {str(exc).splitlines()[0][:300]}"
    args = gateway.new_array(gateway.jvm.java.lang.Object, 1)
    args[0] = server
    try:
        return install.invoke(None, args)
    except Exception as exc:  # noqa: BLE001 - Spark's internals changed: Spark's text stays
        return f"cannot install the error handler: {str(exc).splitlines()[0][:300]}"

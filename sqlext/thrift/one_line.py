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
stays Spark's. Spark's server opens its port and gives each connection its processor when the
connection opens, a moment before the handler is in place: a client connecting in that moment,
before the server prints that it listens, keeps Spark's text for that connection.
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
        status.setErrorMessage(oneLine(status.getErrorMessage()));
      }
    }
    return result;
  }

  /** The message's own lines (up to the first stack frame, blank line or query plan) joined
      as one line, without the exception's class name. */
  public static String oneLine(String text) {
    StringBuilder line = new StringBuilder();
    String[] lines = text.split("\\r?\\n");
    for (int i = 0; i < lines.length; i++) {
      String part = lines[i].trim();
      if (lines[i].startsWith("\\tat ") || (part.length() == 0 && line.length() > 0)) break;
      if (part.length() == 0) continue;
      if (line.length() > 0) line.append(' ');
      // Spark's AnalysisException ends its message with ";" and the query plan's lines
      if (part.endsWith(";")) {
        line.append(part.substring(0, part.length() - 1));
        break;
      }
      line.append(part);
    }
    String joined = line.toString();
    return joined.startsWith(PREFIX) ? joined.substring(PREFIX.length()) : joined;
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


class OneLineErrors:
    """The handler compiled in ``spark``'s JVM (by Spark's Janino) before the server starts, so
    that :meth:`install` right after the start leaves the least time to connections that would
    keep Spark's text (Spark's server gives each connection its processor when it opens)."""

    def __init__(self, spark):
        self.gateway = spark.sparkContext._gateway
        self.problem: str | None = None
        self.handler = self.install_method = None
        jvm = self.gateway.jvm
        try:
            compiler = jvm.org.codehaus.janino.SimpleCompiler()
            compiler.setParentClassLoader(jvm.java.lang.Thread.currentThread()
                                          .getContextClassLoader())
            compiler.cook(HANDLER_SOURCE)
            self.handler = compiler.getClassLoader().loadClass(HANDLER_CLASS)
            self.install_method = self.method("install")
        except Exception as exc:  # noqa: BLE001 - any JVM error: Spark's text stays
            self.problem = f"cannot compile the error handler: {str(exc).splitlines()[0][:300]}"

    def method(self, name: str):
        """The handler's public static method ``name`` (a ``java.lang.reflect.Method``)."""
        return next(m for m in self.handler.getMethods() if m.getName() == name)

    def install(self, server) -> str | None:
        """Make the started Thrift ``server`` (``HiveThriftServer2``) answer a failed
        statement's status with one line; None when done, else why not (the server then
        answers as Spark does)."""
        if self.problem:
            return self.problem
        args = self.gateway.new_array(self.gateway.jvm.java.lang.Object, 1)
        args[0] = server
        try:
            return self.install_method.invoke(None, args)
        except Exception as exc:  # noqa: BLE001 - Spark's internals changed: Spark's text stays
            return f"cannot install the error handler: {str(exc).splitlines()[0][:300]}"

"""``sqlext-sql``: a spark-sql style shell for sqlext.

``sqlext-sql -e "<sql>"`` runs statements and exits, ``-f file`` runs a script, and with neither it
reads statements at a prompt (line editing and history through readline; a statement may span
lines and ends with ``;``). Results print as aligned tables, fitted to the terminal's width
(long values cut, ending in ``...``), or one block per row with ``--vertical`` or ``\\x`` at the
prompt (values never cut); ``DESCRIBE HISTORY`` is shown compact (version, timestamp, operation,
parameters, non-zero metrics) unless vertical; ``exit`` or ``quit`` leaves. In ``-e`` / ``-f`` mode the first
failing statement stops the run with exit code 1. ``Ctrl-C`` cancels the running statement
(``cancelAllJobs``) and returns to the prompt; at the prompt it clears the statement being typed;
``Ctrl-D`` exits.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import sys
import threading
import time

from sqlglot.errors import TokenError
from sqlglot.tokens import TokenType

from sqlext.engine.session import (WAREHOUSE_CONF, WAREHOUSE_RULE, absolute_location, is_connect,
                                   quiet_query_context_logs)
from sqlext.errors import SqlextError
from sqlext.sql.history_view import compact_history
from sqlext.sql.table_format import render, render_vertical
from sqlext.version import VERSION

PROMPT = "sqlext-sql> "
CONTINUATION = "          > "
HISTORY_FILE = os.path.join("~", ".sqlext_sql_history")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="sqlext-sql", description=__doc__.splitlines()[0],
                                     epilog=WAREHOUSE_RULE)
    parser.add_argument("-e", dest="execute", metavar="SQL", help="run SQL and exit")
    parser.add_argument("-f", dest="file", metavar="FILE", help="run the SQL script FILE and exit")
    parser.add_argument("-i", dest="init", metavar="FILE", action="append", default=[],
                        help="run FILE before anything else")
    parser.add_argument("-S", "--silent", action="store_true",
                        help="print results only: no timings, no banner")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="echo each statement and keep Spark's log output")
    parser.add_argument("--vertical", action="store_true",
                        help="show each row as a block of column | value lines (\\x at the prompt)")
    parser.add_argument("--no-progress", dest="progress", action="store_false", default=None,
                        help="no Spark progress bar and no MERGE/OPTIMIZE phase lines (default: "
                             "shown when stderr is a terminal)")
    parser.add_argument("--warehouse", metavar="DIR",
                        help="where tables are kept (spark.sql.warehouse.dir; see below)")
    parser.add_argument("--master", help="Spark master URL (default local[2])")
    parser.add_argument("--remote", help="a Spark Connect server's URL (sc://host:15002) to run "
                        "on instead of a local Spark")
    parser.add_argument("--name", help="Spark application name")
    parser.add_argument("--conf", action="append", default=[], metavar="K=V",
                        help="a Spark setting (repeatable)")
    parser.add_argument("--database", help="the schema to use")
    return parser.parse_args(argv)


def conf_arguments(args: argparse.Namespace, prog: str) -> dict[str, str]:
    """Spark settings from a command-line tool's repeated ``--conf key=value`` (``args.conf``)
    and ``--master`` (``args.master``); an item without ``=`` exits with a message naming
    ``prog``."""
    conf = {}
    for item in args.conf:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"{prog}: --conf expects key=value, not {item!r}")
        conf[key.strip()] = value
    if args.master:
        conf["spark.master"] = args.master
    return conf


def _settings(args: argparse.Namespace) -> dict[str, str]:
    conf = conf_arguments(args, "sqlext-sql")
    if args.name:
        conf["spark.app.name"] = args.name
    if args.warehouse:
        if args.remote:
            raise SystemExit("sqlext-sql: --warehouse is for a local Spark; a Spark Connect "
                             "server keeps its own (sqlext-connect-server --warehouse DIR)")
        conf[WAREHOUSE_CONF] = absolute_location(args.warehouse)
    return conf


class Shell:
    """Runs statements on one SparkSession and prints what they return."""

    def __init__(self, spark, silent: bool = False, verbose: bool = False, out=None, err=None,
                 vertical: bool = False):
        from sqlext.sql.resolve import Resolver

        self.spark = spark
        self.silent, self.verbose, self.vertical = silent, verbose, vertical
        self.out, self.err = out or sys.stdout, err or sys.stderr
        self.resolver = Resolver(spark)
        self.cancelled = False

    # --- running --------------------------------------------------------------------------------

    def run_script(self, text: str, stop_on_error: bool = True) -> bool:
        """Run each statement of ``text`` in turn; False when one failed."""
        from sqlext.sql.parse import parse_statements
        from sqlext.sql.runner import execute
        from sqlext.sql.spark_errors import syntax_checker

        ok = True
        for chunk in split_statements(text):
            try:
                statements = parse_statements(chunk, syntax_checker(self.spark))
            except SqlextError as exc:
                self._error(exc)
                ok = False
                if stop_on_error:
                    return False
                continue
            for stmt in statements:
                if self.verbose:
                    print(stmt.meta["sql"], file=self.out)
                started = time.time()
                self.cancelled = False
                try:
                    with self._cancellable():
                        result = execute(self.resolver, stmt)
                        shown = self._show(result)
                except Exception as exc:  # noqa: BLE001 - a failed statement is reported
                    self._error(exc)
                    ok = False
                    if stop_on_error:
                        return False
                    continue
                if not self.silent:
                    fetched = "" if shown is None else f", Fetched {shown} row(s)"
                    print(f"Time taken: {time.time() - started:.3f} seconds{fetched}",
                          file=self.err)
        return ok

    def _show(self, result) -> int | None:
        if result is None or not result.columns:
            return None
        from sqlext.tables import HISTORY_SCHEMA

        rows = result.collect()
        columns = result.columns
        if self.vertical:
            text = render_vertical(columns, rows)
        else:
            if columns == HISTORY_SCHEMA.names:
                columns, rows = compact_history(columns, rows)
            text = render(columns, rows, width=self._terminal_width())
        print(text, file=self.out)
        self.out.flush()
        return len(rows)

    def _terminal_width(self) -> int | None:
        """The terminal's width when results go to one (tables are fitted to it), else None."""
        if not getattr(self.out, "isatty", lambda: False)():
            return None
        return shutil.get_terminal_size().columns

    def command(self, line: str) -> bool | None:
        """A shell command typed at the prompt instead of SQL: ``exit`` / ``quit`` (False: leave),
        ``\\x`` (toggle vertical display: True). None when ``line`` is not one."""
        word = line.strip().rstrip(";").strip().lower()
        if word in ("exit", "quit", "\\q"):
            return False
        if word == "\\x":
            self.vertical = not self.vertical
            print(f"Vertical display is {'on' if self.vertical else 'off'}.", file=self.err)
            return True
        return None

    def _error(self, exc: BaseException) -> None:
        if self.cancelled:
            print("Cancelled.", file=self.err)
            self.cancelled = False
            return
        name = type(exc).__name__
        print(f"Error ({name}): {exc}", file=self.err)
        self.err.flush()

    def _cancellable(self):
        shell = self

        class _Guard:
            def __enter__(self):
                self.previous = signal.signal(signal.SIGINT, shell._on_interrupt)

            def __exit__(self, *exc):
                signal.signal(signal.SIGINT, self.previous)
                return False

        return _Guard()

    def _on_interrupt(self, signum, frame) -> None:
        # The main thread is inside a py4j call: cancel from another thread (its own connection).
        if not self.cancelled:
            self.cancelled = True
            print("\nCancelling the running statement...", file=self.err)
            cancel = (self.spark.interruptAll if is_connect(self.spark)
                      else self.spark.sparkContext.cancelAllJobs)
            threading.Thread(target=cancel, daemon=True).start()

    # --- interactive ----------------------------------------------------------------------------

    def interactive(self) -> int:
        history = _readline_history()
        if not self.silent:
            print(f"sqlext-sql {VERSION}: end statements with ';', Ctrl-C cancels, \\x toggles "
                  "vertical display, exit (or Ctrl-D) leaves.", file=self.err)
            if not is_connect(self.spark):
                print(f"Tables in {self.spark.conf.get(WAREHOUSE_CONF)} (--warehouse DIR or "
                      "SQLEXT_WAREHOUSE to use others).", file=self.err)
        buffer = ""
        while True:
            try:
                line = input(CONTINUATION if buffer.strip() else PROMPT)
            except EOFError:
                print(file=self.out)
                break
            except KeyboardInterrupt:
                print(file=self.out)
                buffer = ""
                continue
            if not buffer.strip():
                handled = self.command(line)
                if handled is False:
                    break
                if handled:
                    continue
            buffer = f"{buffer}\n{line}" if buffer else line
            complete, rest = complete_statements(buffer)
            if complete:
                self.run_script(complete, stop_on_error=False)
                buffer = rest
        if history:
            history()
        return 0


def split_statements(text: str) -> list[str]:
    """``text`` cut after each top-level ``;``, each piece padded so that its line and column
    numbers are those of ``text`` (so errors point into the whole script)."""
    from sqlext.sql.dialect import Sqlext

    try:
        tokens = Sqlext().tokenize(text)
    except TokenError:
        return [text]   # parse_statements reports where
    pieces, start = [], 0
    for token in tokens:
        if token.token_type == TokenType.SEMICOLON:
            pieces.append((start, token.end + 1))
            start = token.end + 1
    if text[start:].strip():
        pieces.append((start, len(text)))
    out = []
    for begin, end in pieces:
        before = text[:begin]
        column = begin - (before.rfind("\n") + 1)
        out.append("\n" * before.count("\n") + " " * column + text[begin:end])
    return out


def complete_statements(buffer: str) -> tuple[str, str]:
    """(the statements of ``buffer`` ended by ``;``, the unfinished rest)."""
    from sqlext.sql.dialect import Sqlext

    try:
        tokens = Sqlext().tokenize(buffer)
    except TokenError:     # an open string, quoted name or comment: keep reading
        return "", buffer
    ends = [t.end + 1 for t in tokens if t.token_type == TokenType.SEMICOLON]
    if not ends:
        return "", buffer
    rest = buffer[ends[-1]:] if tokens[-1].token_type != TokenType.SEMICOLON else ""
    return buffer[: ends[-1]], rest.lstrip("\n")


def _readline_history():
    """Enable line editing and history; returns a function that saves the history."""
    try:
        import readline
    except ImportError:  # pragma: no cover - no readline on this platform
        return None
    path = os.path.expanduser(os.environ.get("SQLEXT_SQL_HISTORY", HISTORY_FILE))
    try:
        readline.read_history_file(path)
    except (FileNotFoundError, OSError):
        pass
    readline.set_history_length(1000)

    def save():
        try:
            readline.write_history_file(path)
        except OSError:
            pass

    return save


def main(argv: list[str] | None = None) -> int:
    """The ``sqlext-sql`` console script."""
    args = parse_args(argv)
    conf = _settings(args)
    from sqlext.engine.session import session

    spark = session(progress=args.progress, remote=args.remote, **conf)
    if not args.verbose:
        _quiet(spark)
    shell = Shell(spark, silent=args.silent, verbose=args.verbose, vertical=args.vertical)
    try:
        if args.database and not shell.run_script(_use(args.database)):
            return 1
        for path in args.init:
            if not shell.run_script(_read(path)):
                return 1
        if args.execute is not None:
            return 0 if shell.run_script(args.execute) else 1
        if args.file is not None:
            return 0 if shell.run_script(_read(args.file)) else 1
        return shell.interactive()
    finally:
        spark.stop()


def _quiet(spark) -> None:
    """Errors are printed once, by the shell: silence Spark's log and pyspark's query context
    logs of the errors sqlext reports."""
    if not is_connect(spark):     # a Connect server's log is the server's
        spark.sparkContext.setLogLevel("OFF")
    quiet_query_context_logs()


def _use(database: str) -> str:
    from sqlglot import exp

    return exp.Use(this=exp.Table(this=exp.to_identifier(database, quoted=True))).sql(
        dialect="spark")


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as exc:
        raise SystemExit(f"sqlext-sql: cannot read {path}: {exc.strerror}") from exc


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

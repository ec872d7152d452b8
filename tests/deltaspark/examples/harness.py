"""Runs example scripts beside this file, one after another in this process (one JVM, a new
SparkSession per script): ``python harness.py ENGINE DIR SCRIPT...``.

ENGINE ``sqlext``: the script runs as it is (``from delta import *`` is sqlext's, see
sqlext/delta_compat). ENGINE ``delta-spark`` (in .venv-delta): the script runs as it is too, except
that ``configure_spark_with_delta_pip`` gives Spark delta-spark's jars from ``.venv-delta/jars``
(``spark.jars``) instead of asking Maven for the same jars (``spark.jars.packages``). Each script gets its own scratch folder ``DIR/<script>`` for its
tables (its ``sys.argv[1]``). Before a script's output the harness prints ``#### <script>``; a
script that fails prints ``#### <script> failed`` after its traceback (on stderr), and the next
one runs.
"""

import glob
import os
import runpy
import sys
import traceback


def use_local_jars():
    import delta
    import delta.pip_utils

    jars = sorted(glob.glob(os.path.join(sys.prefix, "jars", "*.jar")))
    if not jars:
        raise SystemExit(f"no jars in {sys.prefix}/jars: run scripts/venv_delta.sh")

    def configure_spark_with_delta_pip(builder, extra_packages=None):
        return builder.config("spark.jars", ",".join(jars))

    delta.configure_spark_with_delta_pip = configure_spark_with_delta_pip
    delta.pip_utils.configure_spark_with_delta_pip = configure_spark_with_delta_pip


def main():
    engine, scratch, *scripts = sys.argv[1:]
    if engine == "delta-spark":
        use_local_jars()
    elif engine != "sqlext":
        raise SystemExit(f"unknown engine {engine!r}")
    here = os.path.dirname(os.path.abspath(__file__))
    for name in scripts:
        folder = os.path.join(scratch, name)
        os.makedirs(folder)
        print(f"#### {name}", flush=True)
        sys.argv = [name, folder]
        try:
            runpy.run_path(os.path.join(here, f"{name}.py"), run_name="__main__")
        except BaseException:  # noqa: BLE001 - report it, run the next script
            traceback.print_exc()
            print(f"#### {name} failed", flush=True)
        finally:
            stop_active_session()
        sys.stdout.flush()


def stop_active_session():
    """A script that failed half-way leaves its session running: stop it, so the next script's
    builder makes a new one with its own settings."""
    from pyspark.sql import SparkSession

    spark = SparkSession.getActiveSession()
    if spark is not None:
        spark.stop()


if __name__ == "__main__":
    main()

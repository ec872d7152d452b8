#!/usr/bin/env python3
"""Fetch Maven artifacts and their runtime dependencies with Spark's own resolver and print the
jars' paths, one per line.

This is what ``spark.jars.packages`` does (and delta-spark's ``configure_spark_with_delta_pip``):
spark-submit resolves the coordinates with the Ivy that pyspark ships, before any SparkContext
exists. So this starts only pyspark's JVM gateway with ``spark.jars.packages`` set, reads the
resolved jars from its ``spark.jars`` and stops it: no Maven, no SparkContext. Artifacts come from
Maven Central (or ``$SQLEXT_MAVEN_REPOSITORY``, a Maven repository URL) into the Ivy cache
``--ivy`` (the repository's ``.cache/ivy``, ignored by git; jars are downloaded once). Spark's
and Ivy's output goes to ``--log``. Run it with the python of the virtualenv whose pyspark
should resolve (scripts/venv_delta.sh, scripts/s3_jars.sh).

Usage: fetch_jars.py --ivy DIR [--exclude GROUP:ARTIFACT]... [--log FILE] GROUP:ARTIFACT:VERSION...
(``--exclude`` takes globs: ``org.roaringbitmap:*``).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from urllib.parse import urlparse
from xml.sax.saxutils import quoteattr

CENTRAL = "https://repo1.maven.org/maven2/"


def ivy_settings(ivy: Path) -> Path:
    """Ivy settings with one resolver, Maven Central: Spark's default chain also reads
    ~/.m2/repository, where a pom without its jar fails the resolution, and spark-packages."""
    root = os.environ.get("SQLEXT_MAVEN_REPOSITORY", CENTRAL)
    path = ivy / "ivysettings.xml"
    path.write_text(
        '<ivysettings>\n  <settings defaultResolver="central"/>\n  <resolvers>\n'
        f'    <ibiblio name="central" m2compatible="true" root={quoteattr(root)}/>\n'
        '  </resolvers>\n</ivysettings>\n')
    return path


def fetch(packages: list[str], ivy: Path, excludes: list[str], log: Path) -> list[str]:
    from pyspark import SparkConf
    from pyspark.java_gateway import launch_gateway

    ivy.mkdir(parents=True, exist_ok=True)
    conf = (SparkConf(loadDefaults=False)
            .set("spark.jars.packages", ",".join(packages))
            .set("spark.jars.ivy", str(ivy))
            .set("spark.jars.ivySettings", str(ivy_settings(ivy))))
    if excludes:
        conf.set("spark.jars.excludes", ",".join(excludes))
    os.environ.pop("PYSPARK_GATEWAY_PORT", None)    # a JVM of our own, even under a Spark app
    os.environ.pop("PYSPARK_SUBMIT_ARGS", None)
    with open(log, "w") as out:
        gateway = launch_gateway(conf, popen_kwargs={"stdout": out, "stderr": out})
    try:
        jars = gateway.jvm.java.lang.System.getProperty("spark.jars") or ""
    finally:
        gateway.shutdown()
        gateway.proc.stdin.close()                  # the gateway JVM exits on EOF
        gateway.proc.wait(timeout=60)
    return [urlparse(j).path if j.startswith("file:") else j for j in jars.split(",") if j]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("packages", nargs="+", metavar="GROUP:ARTIFACT:VERSION")
    parser.add_argument("--ivy", type=Path, required=True)
    parser.add_argument("--exclude", action="append", default=[])
    parser.add_argument("--log", type=Path, default=Path(os.devnull))
    args = parser.parse_args()
    try:
        jars = fetch(args.packages, args.ivy.resolve(), args.exclude, args.log)
    except Exception as error:  # noqa: BLE001 - the log says why Ivy failed
        sys.exit(f"fetch_jars.py: resolving {' '.join(args.packages)} failed ({error}); see {args.log}")
    missing = [j for j in jars if not os.path.isfile(j)]
    if not jars or missing:
        sys.exit(f"fetch_jars.py: no jars resolved for {' '.join(args.packages)}"
                 f"{' (missing: ' + ', '.join(missing) + ')' if missing else ''}; see {args.log}")
    print("\n".join(jars))


if __name__ == "__main__":
    main()

#!/usr/bin/env bash
# Create or refresh .venv-delta at the repository root: pyspark 4.2 and delta-spark 4.4 (the
# oracle tests/deltaspark and bench/ --delta-spark drive as a subprocess, tests/support/deltaspark.py),
# and delta-spark's jars in .venv-delta/jars, fetched from Maven Central with Maven
# (scripts/delta-spark/pom.xml) and passed to Spark with spark.jars. Re-installs only when the
# requirements or the pom changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null 2>&1 || python=python3
here=scripts/delta-spark
venv=.venv-delta
stamp=$venv/.delta-installed
want="$(cat $here/requirements.txt $here/pom.xml "$0" | sha256sum | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
[ -x $venv/bin/python ] || "$python" -m venv $venv
$venv/bin/python -m pip install --quiet --upgrade pip
$venv/bin/python -m pip install --quiet -r $here/requirements.txt
# Jars: everything the pom resolves at runtime scope, less what pyspark already ships (another
# version of Hadoop, Jackson, Parquet, log4j or Scala on the classpath would clash with Spark's).
spark_jars="$($venv/bin/python -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
fetched="$(mktemp -d)"
trap 'rm -rf "$fetched"' EXIT
mvn --batch-mode --quiet -f $here/pom.xml dependency:copy-dependencies \
  -DincludeScope=runtime -DoutputDirectory="$fetched"
rm -rf $venv/jars && mkdir -p $venv/jars
for jar in "$fetched"/*.jar; do
  name="$(basename "$jar" .jar)"
  artifact="${name%%-[0-9]*}"
  if ! compgen -G "$spark_jars/$artifact-[0-9]*.jar" >/dev/null; then
    cp "$jar" $venv/jars/
  fi
done
ls $venv/jars | grep -q '^delta-spark_' || { echo "venv_delta.sh: no delta-spark jar fetched" >&2; exit 1; }
echo "$want" > "$stamp"

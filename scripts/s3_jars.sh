#!/usr/bin/env bash
# Fetch Spark's s3a:// connector for the S3 tests (hadoop-aws at the Hadoop version pyspark ships,
# and its AWS SDK bundle) from Maven Central with Maven (scripts/s3/pom.xml), and write their
# paths in the local Maven repository, comma-separated, to .venv/s3a-jars.txt;
# tests/support/spark.py passes them to the test session as spark.jars. Re-runs only when the
# pom or pyspark's Hadoop version changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
here=scripts/s3
out=.venv/s3a-jars.txt
stamp=.venv/.s3a-jars-installed
spark_jars="$(.venv/bin/python -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
api="$(cd "$spark_jars" && ls hadoop-client-api-*.jar)"
hadoop="${api#hadoop-client-api-}"; hadoop="${hadoop%.jar}"
want="$(cat $here/pom.xml "$0" | sha256sum | cut -d' ' -f1) $hadoop"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -s "$out" ]; then
  exit 0
fi
mvn --batch-mode --quiet -f $here/pom.xml dependency:build-classpath -Dhadoop.version="$hadoop" \
  -DincludeScope=runtime -Dmdep.pathSeparator=, -Dmdep.outputFile="$root/$out.tmp"
mv "$out.tmp" "$out"
grep -q "hadoop-aws-$hadoop.jar" "$out" || { echo "s3_jars.sh: hadoop-aws $hadoop not fetched" >&2; exit 1; }
echo "$want" > "$stamp"

#!/usr/bin/env bash
# Fetch Spark's s3a:// connector for the S3 tests (tests/storage/test_s3.py): hadoop-aws at the
# Hadoop version pyspark ships (its jars/hadoop-client-api-*.jar) and what it needs at runtime
# (the AWS SDK bundle, ~650 MB, which shades its own dependencies), with pyspark's own resolver
# (spark.jars.packages, Ivy: scripts/fetch_jars.py) from Maven Central into .cache/ivy; no Maven
# needed. Their paths, comma-separated, go to .venv/s3a-jars.txt; tests/support/spark.py puts them
# on the test session's classpath. Re-runs only when the scripts or pyspark's Hadoop version
# changed, or a listed jar is gone.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out=.venv/s3a-jars.txt
stamp=.venv/.s3a-jars-installed
spark_jars="$(.venv/bin/python -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
api="$(cd "$spark_jars" && ls hadoop-client-api-*.jar)"
hadoop="${api#hadoop-client-api-}"; hadoop="${hadoop%.jar}"
want="$(cat scripts/fetch_jars.py "$0" | sha256sum | cut -d' ' -f1) $hadoop"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ] && [ -s "$out" ] \
   && tr ',' '\n' < "$out" | while IFS= read -r jar; do [ -f "$jar" ] || exit 1; done; then
  exit 0
fi
echo "setup: s3a connector: fetching hadoop-aws $hadoop and the AWS SDK bundle (Spark's resolver, Maven Central, .cache/ivy) ..." >&2
mkdir -p .cache/setup
.venv/bin/python scripts/fetch_jars.py --ivy .cache/ivy --log .cache/setup/s3a-jars.log \
  "org.apache.hadoop:hadoop-aws:$hadoop" | paste -sd, - > "$out.tmp"
grep -q "hadoop-aws-$hadoop.jar" "$out.tmp" || { echo "s3_jars.sh: hadoop-aws $hadoop not fetched" >&2; exit 1; }
mv "$out.tmp" "$out"
echo "$want" > "$stamp"

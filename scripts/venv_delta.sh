#!/usr/bin/env bash
# Create or refresh .venv-delta at the repository root: pyspark 4.2 and delta-spark 4.4 (the
# oracle tests/deltaspark and bench/ --delta-spark drive as a subprocess, tests/support/deltaspark.py),
# and delta-spark's jars in .venv-delta/jars, passed to Spark with spark.jars. The jars are
# resolved by that pyspark's own resolver (spark.jars.packages, Ivy: scripts/fetch_jars.py) from
# Maven Central into .cache/ivy; no Maven needed. Re-installs only when the requirements or the
# scripts changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null 2>&1 || python=python3
requirements=scripts/delta-spark/requirements.txt
venv=.venv-delta
stamp=$venv/.delta-installed
want="$(cat $requirements scripts/fetch_jars.py "$0" | sha256sum | cut -d' ' -f1)"
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
# The jars' versions are the pip packages': delta-spark_<pyspark minor>_2.13 at delta-spark's
# version (4.4.0: 4.4.1 is on PyPI but its jars are not on Maven Central).
delta="$(sed -n 's/^delta-spark==//p' $requirements)"
spark="$(sed -n 's/^pyspark==\([0-9]*\.[0-9]*\).*/\1/p' $requirements)"
echo "setup: .venv-delta: installing pyspark $(sed -n 's/^pyspark==//p' $requirements), delta-spark $delta (pip) ..." >&2
[ -x $venv/bin/python ] || "$python" -m venv $venv
$venv/bin/python -m pip install --quiet --upgrade pip
$venv/bin/python -m pip install --quiet -r $requirements
echo "setup: .venv-delta: fetching delta-spark $delta's jars (Spark's resolver, Maven Central, .cache/ivy) ..." >&2
mkdir -p .cache/setup
# RoaringBitmap 0.9 and its shims excluded: pyspark ships RoaringBitmap 1.x, which includes them
jars="$($venv/bin/python scripts/fetch_jars.py --ivy .cache/ivy --log .cache/setup/venv-delta-jars.log \
  --exclude 'org.roaringbitmap:*' "io.delta:delta-spark_${spark}_2.13:$delta" "io.delta:delta-storage:$delta")"
# Keep only the jars pyspark does not ship (another version of Hadoop, Jackson, Parquet, log4j
# or Scala on the classpath would clash with Spark's). Ivy names them group_artifact-version.jar.
spark_jars="$($venv/bin/python -c 'import os, pyspark; print(os.path.join(os.path.dirname(pyspark.__file__), "jars"))')"
rm -rf $venv/jars.new && mkdir -p $venv/jars.new
while IFS= read -r jar; do
  name="$(basename "$jar" .jar)"
  name="${name#*_}"
  artifact="${name%%-[0-9]*}"
  if ! compgen -G "$spark_jars/$artifact-[0-9]*.jar" >/dev/null; then
    cp "$jar" "$venv/jars.new/$name.jar"
  fi
done <<< "$jars"
ls $venv/jars.new | grep -q '^delta-spark_' || { echo "venv_delta.sh: no delta-spark jar fetched" >&2; exit 1; }
rm -rf $venv/jars && mv $venv/jars.new $venv/jars
echo "$want" > "$stamp"

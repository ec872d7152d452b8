#!/usr/bin/env bash
# Create or refresh .venv-pyspark-<minor> for each pyspark release of the supported range that the
# main .venv does not run (scripts/pyspark-versions.txt: the newest release of each minor line):
# sqlext (editable) with its test dependencies and that pyspark. tests/compat runs a part of the
# suite under each. Re-installs only when pyproject.toml, setup.py or the list changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null 2>&1 || python=python3
want="$(cat pyproject.toml setup.py scripts/pyspark-versions.txt "$0" | sha256sum | cut -d' ' -f1)"
grep -v '^#' scripts/pyspark-versions.txt | while read -r version; do
  [ -n "$version" ] || continue
  venv=".venv-pyspark-${version%.*}"
  stamp=$venv/.sqlext-installed
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
    continue
  fi
  echo "setup: $venv: installing sqlext (editable) with pyspark $version (pip) ..." >&2
  [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --upgrade pip
  "$venv/bin/python" -m pip install --quiet -e ".[test]" "pyspark==$version"
  echo "$want" > "$stamp"
done

#!/usr/bin/env bash
# The test suite: set up .venv (sqlext), .venv-delta (delta-spark, the tests' oracle), one venv
# per older pyspark minor line (tests/compat) and Spark's s3a connector jars (the S3 tests), then
# fetch delta-rs's test tables from PyPI's deltalake sdist into .cache/delta-rs-tables
# (tests/compat/test_delta_rs_tables.py), then run pytest (extra arguments are passed to pytest).
set -euo pipefail
cd "$(dirname "$0")"
scripts/venv.sh
scripts/venv_delta.sh
scripts/venv_pyspark.sh
scripts/s3_jars.sh
.venv/bin/python scripts/delta_rs_tables.py
exec .venv/bin/python -m pytest "$@"

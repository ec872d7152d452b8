#!/usr/bin/env bash
# The test suite: set up .venv (sqlext) and .venv-delta (delta-spark, the tests' oracle), then
# run pytest (extra arguments are passed to pytest).
set -euo pipefail
cd "$(dirname "$0")"
scripts/venv.sh
scripts/venv_delta.sh
exec .venv/bin/python -m pytest "$@"

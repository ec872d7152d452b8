#!/usr/bin/env bash
# The test suite: set up .venv, then run pytest (extra arguments are passed to pytest).
set -euo pipefail
cd "$(dirname "$0")"
scripts/venv.sh
exec .venv/bin/python -m pytest "$@"

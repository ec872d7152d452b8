#!/usr/bin/env bash
# The main job: set up .venv, then run the sqlext demo on an embedded local Spark.
set -euo pipefail
cd "$(dirname "$0")"
scripts/venv.sh
exec .venv/bin/python -m sqlext.demo "$@"

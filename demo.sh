#!/usr/bin/env bash
# The main job: set up .venv, then, on an embedded local Spark,
#   1. the example dbt project on `type: sqlext` (examples/run_example.py): build it, change the
#      seed data, build again, then the change feed and DESCRIBE HISTORY of its models in SQL;
#   2. the Python API tour (python -m sqlext.demo).
# ./demo.sh dbt [args]     only step 1 (args go to examples/run_example.py: --workdir, --schema)
# ./demo.sh python [args]  only step 2 (args go to python -m sqlext.demo: --dir)
set -euo pipefail
cd "$(dirname "$0")"
scripts/venv.sh
what="${1:-all}"
[ $# -gt 0 ] && shift
case "$what" in
  dbt) exec .venv/bin/python examples/run_example.py "$@" ;;
  python) exec .venv/bin/python -m sqlext.demo "$@" ;;
  all) .venv/bin/python examples/run_example.py "$@"
       exec .venv/bin/python -m sqlext.demo ;;
  *) echo "usage: ./demo.sh [dbt|python] [arguments of that step]" >&2; exit 2 ;;
esac

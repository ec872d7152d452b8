#!/usr/bin/env bash
# The test suite: set up what the selected tests need, then run pytest (other arguments go to it).
#   ./test.sh                  everything (.ci/run)
#   ./test.sh PATH... [opts]   only the set-up those paths need: always .venv (sqlext, scripts/venv.sh);
#                              tests/deltaspark: .venv-delta, delta-spark as the oracle (venv_delta.sh);
#                              tests/compat: .venv-pyspark-* (venv_pyspark.sh) and delta-rs's test
#                              tables (delta_rs_tables.py); tests/storage: the s3a jars (s3_jars.sh)
#   ./test.sh --quick [...]    -m 'not slow': all but the cross-engine suites (tests/deltaspark,
#                              tests/compat), so none of their set-up
# Each set-up step is one line with its time on stderr ("setup: ..."), plus a line for each thing
# it installs or fetches (re-runs find them done). SQLEXT_SETUP_DRY_RUN=1 prints the steps and the
# pytest command instead of running them.
set -euo pipefail
cd "$(dirname "$0")"

quick=
args=()
for arg in "$@"; do
  if [ "$arg" = --quick ]; then quick=1; else args+=("$arg"); fi
done
[ -z "$quick" ] || args=(-m "not slow" "${args[@]}")

# The test paths among pytest's arguments (an option's value is not one; `file::test` is its file).
paths=()
skip=
for arg in "${args[@]}"; do
  if [ -n "$skip" ]; then skip=; continue; fi
  case "$arg" in
    -k|-m|-p|-o|-c|-W|-n|--deselect|--ignore|--ignore-glob|--basetemp|--rootdir|--confcutdir|--maxfail|--durations|--tb|--junitxml)
      skip=1 ;;
    -*) ;;
    *) path="${arg%%::*}"; path="${path#"$PWD"/}"; path="${path#./}"; paths+=("${path%/}") ;;
  esac
done

needs() {  # needs SUITE: no path given, or one that is SUITE, inside it or above it
  [ ${#paths[@]} -gt 0 ] || return 0
  for path in "${paths[@]}"; do
    if [ "$path" = . ] || [[ "$1/" == "$path/"* ]] || [[ "$path/" == "$1/"* ]]; then return 0; fi
  done
  return 1
}

now() { local t="${EPOCHREALTIME:-$SECONDS}"; echo "${t/,/.}"; }
step() {  # step NAME COMMAND...: run one set-up step, then "setup: NAME ready (N s)" on stderr
  if [ -n "${SQLEXT_SETUP_DRY_RUN:-}" ]; then echo "setup (dry run): $1: ${*:2}" >&2; return; fi
  local start; start="$(now)"
  "${@:2}"
  awk -v a="$start" -v b="$(now)" -v name="$1" \
    'BEGIN { printf "setup: %s ready (%.1f s)\n", name, b - a }' >&2
}

step .venv scripts/venv.sh
if [ -z "$quick" ] && needs tests/deltaspark; then
  step .venv-delta scripts/venv_delta.sh
fi
if [ -z "$quick" ] && needs tests/compat/test_pyspark_versions.py; then
  step .venv-pyspark-'*' scripts/venv_pyspark.sh
fi
if needs tests/storage; then
  step "s3a jars" scripts/s3_jars.sh
fi
if [ -z "$quick" ] && needs tests/compat/test_delta_rs_tables.py; then
  step "delta-rs test tables" .venv/bin/python scripts/delta_rs_tables.py
fi
if [ -n "${SQLEXT_SETUP_DRY_RUN:-}" ]; then
  echo "pytest (dry run):$([ ${#args[@]} -eq 0 ] || printf ' %q' "${args[@]}")" >&2
  exit 0
fi
exec .venv/bin/python -m pytest "${args[@]}"

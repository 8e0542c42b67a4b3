#!/usr/bin/env bash
# Runs every test: builds and installs the package (build/package.sh); lints the Python code of
# python/, tests/ and build/ (ruff check, ruff format --check, mypy --strict: ruff.toml and
# mypy.ini); checks the Scala format (scalafmt, .scalafmt.conf); runs the JVM suites (sbt
# spark/test for Spark 3.5 / Scala 2.12, then sbt ++2.13.x spark/test for Spark 4.0 / Scala
# 2.13; compiler warnings in main code are errors), then the end-to-end pytest suites
# in tests/ against the installed package. A failing stage does not stop the later ones (a
# failing build/package.sh does: nothing after it could run); the run exits 1 if any failed. It
# ends with a table of each stage's wall time and result, and the total, pass or fail.
#
#   bash build/test.sh                  # everything except tests/benchmarks
#   bash build/test.sh --benchmarks     # also the benchmarks
#   bash build/test.sh -- -k roundtrip  # extra arguments after -- go to pytest
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"

benchmarks=0
pytest_extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --benchmarks) benchmarks=1; shift ;;
    --) shift; pytest_extra=("$@"); break ;;
    *) echo "test.sh: unknown argument $1 (pytest arguments go after --)" >&2; exit 2 ;;
  esac
done

# ---- stages: each one's name, wall time and result, for the table at the end ------------------
failed=()
stage_names=()
stage_micros=()
stage_results=()

now_micros() {
  if [[ -n "${EPOCHREALTIME:-}" ]]; then
    echo "${EPOCHREALTIME//[.,]/}"
  else
    echo "$(($(date +%s) * 1000000))"
  fi
}
RUN_START="$(now_micros)"

# 75.3s, 4m 05s, 1h 02m 09s
format_micros() {
  local tenths=$(($1 / 100000))
  local secs=$((tenths / 10))
  if ((secs < 60)); then
    printf '%d.%ds' "${secs}" "$((tenths % 10))"
  elif ((secs < 3600)); then
    printf '%dm %02ds' "$((secs / 60))" "$((secs % 60))"
  else
    printf '%dh %02dm %02ds' "$((secs / 3600))" "$((secs % 3600 / 60))" "$((secs % 60))"
  fi
}

# run_stage NAME COMMAND [ARG...]: runs one stage with no standard input (sbt must not wait for
# input) and records its time; a non-zero exit is collected as a failure and the run goes on.
run_stage() {
  local name="$1"
  shift
  echo "test.sh: ${name}: $*"
  local start rc=0
  start="$(now_micros)"
  "$@" </dev/null || rc=$?
  stage_names+=("${name}")
  stage_micros+=("$(($(now_micros) - start))")
  if [[ "${rc}" -eq 0 ]]; then
    stage_results+=("ok")
  else
    stage_results+=("FAILED (exit ${rc})")
    failed+=("${name} (exit ${rc})")
  fi
}

print_summary() {
  local rc=$? i total
  total="$(($(now_micros) - RUN_START))"
  echo
  echo "test.sh: stage times"
  printf '  %-16s %12s  %s\n' "stage" "wall time" "result"
  for i in "${!stage_names[@]}"; do
    printf '  %-16s %12s  %s\n' "${stage_names[i]}" "$(format_micros "${stage_micros[i]}")" \
      "${stage_results[i]}"
  done
  printf '  %-16s %12s  %s\n' "total" "$(format_micros "${total}")" \
    "$([[ "${rc}" -eq 0 ]] && echo "PASSED" || echo "FAILED")"
}
trap print_summary EXIT

# ---- the stages -------------------------------------------------------------------------------
python_lint() {
  local rc=0
  .venv/bin/python -m ruff check python tests build || rc=1
  .venv/bin/python -m ruff format --check python tests build || rc=1
  .venv/bin/python -m mypy python tests build || rc=1
  return "${rc}"
}

run_pytest() {
  local args=(tests -q --durations=25) rc=0
  if [[ "${benchmarks}" -eq 0 ]]; then
    args+=(--ignore=tests/benchmarks)
  fi
  .venv/bin/python -m pytest "${args[@]}" ${pytest_extra[@]+"${pytest_extra[@]}"} || rc=$?
  if [[ "${rc}" -eq 5 ]]; then
    echo "test.sh: pytest collected no tests, which counts as a failure" >&2
  fi
  return "${rc}"
}

# Everything else needs the JAR and .venv (with the linters): without them, stop here.
run_stage "package" bash build/package.sh
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "test.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi

# One line per stage; a new check is one more run_stage line.
run_stage "servers" bash build/servers.sh
run_stage "python lint" python_lint
run_stage "scala format" build/sbt scalafmtCheckAll "bench/scalafmtCheckAll" \
  "++2.13.x" "spark/scalafmtCheckAll"
run_stage "sbt spark/test" build/sbt "spark/test"
# The Spark 4 / Scala 2.13 build of the same suites (`++2.13.x`: build.sbt's crossScalaVersions).
run_stage "sbt 2.13 test" build/sbt "++2.13.x" "spark/test"
run_stage "pytest" run_pytest

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "test.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "test.sh: all tests passed"

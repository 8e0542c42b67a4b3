#!/usr/bin/env bash
# Runs every test: builds and installs the package (build/package.sh); lints the Python code of
# python/, tests/ and build/ (ruff check, ruff format --check, mypy --strict: ruff.toml and
# mypy.ini); checks the Scala format (scalafmt, .scalafmt.conf); runs the JVM suites (sbt
# spark/test for Spark 3.5 / Scala 2.12, then sbt ++2.13.x spark/test for Spark 4 / Scala 2.13,
# compiled against and tested on 4.0; compiler warnings in main code are errors), then the
# end-to-end pytest suites in tests/ against the installed package: all of them under PySpark 3.5
# (.venv), the named subset SPARK4_PYTEST under PySpark 4.2 (.venv-spark4), and SPARK40_PYTEST
# under PySpark 4.0 (.venv-spark40). A failing stage does not stop the later ones (a
# failing build/package.sh does: nothing after it could run); the run exits 1 if any failed. It
# ends with a table of each stage's wall time and result, and the total, pass or fail.
#
#   bash build/test.sh                  # everything except tests/benchmarks
#   bash build/test.sh --benchmarks     # also tests/benchmarks: the benchmark scripts' smoke runs
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

# The pytest runs spread their files over PYTEST_WORKERS processes (pytest-xdist), each with its
# own Spark session: a file's tests stay together in one process (--dist loadfile), so a
# module's fixtures are made once. On two cores one pytest process keeps about 1.5 of them busy,
# two keep both. PYTEST_WORKERS=0 runs them in this process, one file after another.
PYTEST_WORKERS="${PYTEST_WORKERS:-2}"
if [[ ! "${PYTEST_WORKERS}" =~ ^[0-9]+$ ]]; then
  echo "test.sh: PYTEST_WORKERS must be a number of processes (0 for none), not '${PYTEST_WORKERS}'" >&2
  exit 2
fi
workers() {
  if [[ "${PYTEST_WORKERS}" -gt 0 ]]; then
    echo "-n ${PYTEST_WORKERS} --dist loadfile"
  fi
}

run_pytest() {
  local args=(tests -q --durations=25 $(workers)) rc=0
  if [[ "${benchmarks}" -eq 0 ]]; then
    args+=(--ignore=tests/benchmarks)
  fi
  .venv/bin/python -m pytest "${args[@]}" ${pytest_extra[@]+"${pytest_extra[@]}"} || rc=$?
  if [[ "${rc}" -eq 5 ]]; then
    echo "test.sh: pytest collected no tests, which counts as a failure" >&2
  fi
  return "${rc}"
}

# The pytest run on Spark 4.2: PySpark 4.2 in .venv-spark4 (build/package.sh), where the package
# picks its Spark 4 / Scala 2.13 JAR (compiled against 4.0, serving 4.0, 4.1 and 4.2). The whole
# suite runs on Spark 3.5 above; on 4.2 a named subset that covers every feature area keeps CI
# inside its time: writes and reads on both layouts, IndexQuery in SQL and the Python column
# functions, the package and its errors, the catalog, the SQL and cache commands and MERGE
# SPLITS, object storage (moto and Azurite), companion indexes over Parquet and over Delta tables
# (Delta 4.4, target/oracle-jars-4.2), the streaming sink and source, row-level DELETE / UPDATE /
# MERGE INTO, ranked search and snippets, scan metrics in the Spark UI, Spark Connect, and a
# fresh virtual environment with the wheel.
SPARK4_PYTEST=(
  test_write_read.py test_package.py test_python_errors.py test_indexquery.py test_functions.py
  test_catalog.py test_sql_commands.py test_cache_commands.py test_merge_splits.py
  test_object_stores.py test_companion.py test_companion_delta.py test_streaming_sink.py
  test_streaming_source.py test_delete.py test_update_merge.py test_ranked_search.py
  test_snippets.py test_scan_metrics.py test_connect.py test_wheel.py
)
# The pytest run on Spark 4.0 (PySpark 4.0 in .venv-spark40, the same JAR): companion indexes
# over Iceberg tables, served on Spark 3.5, 4.0 and 4.1 (Iceberg has no runtime for 4.2), and over
# Delta 4.0 tables, whose DeltaLog calls differ from Delta 4.4's (lake/DeltaLogCalls); the
# streaming source, whose scan Spark 4.0 builds untouched where 4.2 prunes it first; and
# `spark-submit --packages` of the indextables-spark_2.13 artifact, on the Spark it is compiled
# against.
SPARK40_PYTEST=(
  test_companion_delta.py test_companion_iceberg.py test_streaming_source.py test_maven_package.py
)
# run_pytest_venv VENV FILE...: the named tests under the virtual environment VENV, less those
# marked line_neutral (tests/pytest.ini): long runs of machinery the Spark lines share (writer
# races, killed processes, listing at scale), which the PySpark 3.5 run covers.
run_pytest_venv() {
  local venv="$1" files=() rc=0
  shift
  for f in "$@"; do files+=("tests/${f}"); done
  "${venv}/bin/python" -m pytest "${files[@]}" -q --durations=10 $(workers) -m "not line_neutral" \
    ${pytest_extra[@]+"${pytest_extra[@]}"} || rc=$?
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
run_stage "pytest spark 4.2" run_pytest_venv .venv-spark4 "${SPARK4_PYTEST[@]}"
run_stage "pytest spark 4.0" run_pytest_venv .venv-spark40 "${SPARK40_PYTEST[@]}"

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "test.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "test.sh: all tests passed"

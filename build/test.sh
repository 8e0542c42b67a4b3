#!/usr/bin/env bash
# Runs every test: builds and installs the package (build/package.sh), then the JVM suites
# (sbt spark/test), then the end-to-end pytest suites in tests/ against the installed package.
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

bash build/package.sh

failed=()

echo "test.sh: JVM tests (sbt spark/test)"
if ! build/sbt "spark/test" </dev/null; then
  failed+=("sbt spark/test")
fi

echo "test.sh: Python end-to-end tests (pytest tests)"
pytest_args=(tests -q)
if [[ "${benchmarks}" -eq 0 ]]; then
  pytest_args+=(--ignore=tests/benchmarks)
fi
set +e
.venv/bin/python -m pytest "${pytest_args[@]}" ${pytest_extra[@]+"${pytest_extra[@]}"}
pytest_rc=$?
set -e
if [[ "${pytest_rc}" -eq 5 ]]; then
  echo "test.sh: pytest collected no tests, which counts as a failure" >&2
  failed+=("pytest (no tests collected)")
elif [[ "${pytest_rc}" -ne 0 ]]; then
  failed+=("pytest (exit ${pytest_rc})")
fi

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "test.sh: FAILED: ${failed[*]}" >&2
  exit 1
fi
echo "test.sh: all tests passed"

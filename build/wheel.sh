#!/usr/bin/env bash
# Builds the indextables-spark wheel into target/dist/ (or the directory given as $1): the Python
# package with the plugin JAR that build/package.sh put in python/indextables/jars/. The wheel is
# tagged py3-none-manylinux_2_34_x86_64 (python/setup.py says why). Prints the wheel's path.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"
OUT="$(mkdir -p "${1:-target/dist}" && cd "${1:-target/dist}" && pwd)"

VERSION="$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' python/indextables/_version.py)"
JAR="python/indextables/jars/indextables-spark-assembly-${VERSION}.jar"
if [[ ! -f "${JAR}" ]]; then
  echo "wheel.sh: ${JAR} is missing; run build/package.sh first" >&2
  exit 1
fi
PY="${PYTHON:-.venv/bin/python}"
rm -f "${OUT}"/indextables_spark-*.whl
# Built from a private copy of python/: setuptools writes python/build and the egg-info into the
# tree it builds (and never cleans python/build/lib, where a stale JAR would end up in the wheel),
# and two builds at once (the tests' workers, or package.sh beside this) must not share them.
SRC="$(mktemp -d)"
trap 'rm -rf "${SRC}"' EXIT
(cd python && tar --exclude=build --exclude='*.egg-info' --exclude=__pycache__ -cf - .) |
  (cd "${SRC}" && tar -xf -)
"${PY}" -m pip --disable-pip-version-check -q wheel --no-deps -w "${OUT}" "${SRC}"
ls "${OUT}"/indextables_spark-*.whl

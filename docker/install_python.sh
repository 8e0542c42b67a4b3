#!/usr/bin/env bash
# Image build step 2: a virtual environment at $1 with the indextables-spark wheel found in $2
# and PySpark (the wheel's `pyspark` extra; INDEXTABLES_PYSPARK pins its version), the clients the example uses to create its bucket and container
# (boto3, azure-storage-blob), and JupyterLab when INDEXTABLES_JUPYTER=1. Ends by printing
# `python -m indextables info`, which fails when the wheel's JAR is missing.
#   install_python.sh <venv> <directory holding indextables_spark-*.whl>
set -euo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: install_python.sh <venv> <wheel directory>" >&2
  exit 2
fi
VENV="$1"
WHEELS="$2"
shopt -s nullglob
wheels=("${WHEELS}"/indextables_spark-*.whl)
if [[ ${#wheels[@]} -ne 1 ]]; then
  echo "install_python.sh: expected one indextables_spark wheel in ${WHEELS}, found ${#wheels[@]}" >&2
  exit 1
fi

"${PYTHON:-python3}" -m venv "${VENV}"
PIP=("${VENV}/bin/python" -m pip --disable-pip-version-check -q)
packages=("${wheels[0]}[pyspark]" "boto3>=1.34" "azure-storage-blob>=12.19")
if [[ -n "${INDEXTABLES_PYSPARK:-}" ]]; then
  packages+=("pyspark==${INDEXTABLES_PYSPARK}")
fi
if [[ "${INDEXTABLES_JUPYTER:-0}" == 1 ]]; then
  packages+=("jupyterlab>=4" "jupytext>=1.16")
fi
"${PIP[@]}" install "${packages[@]}"
"${VENV}/bin/python" -m indextables info

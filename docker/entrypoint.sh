#!/usr/bin/env bash
# The image's entry point: with arguments, runs them in the package's environment (for example
# `python notebooks/quickstart.py`); without, starts JupyterLab on port 8888, where
# notebooks/quickstart.py opens as a notebook (jupytext).
set -euo pipefail

VENV="${INDEXTABLES_VENV:-/opt/indextables/venv}"
export PATH="${VENV}/bin:${PATH}"
if [[ $# -gt 0 ]]; then
  exec "$@"
fi
exec jupyter lab --ip=0.0.0.0 --port=8888 --no-browser \
  --ServerApp.token="${JUPYTER_TOKEN:-indextables}"

#!/usr/bin/env bash
# Builds everything (build/package.sh), then runs tests/demo/demo.py: it writes a realistic log
# table of 100k+ rows with IndexTables, reads it back and runs a few searches, with timings.
# Arguments are passed to the demo (try --help).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"

bash build/package.sh
exec .venv/bin/python tests/demo/demo.py "$@"

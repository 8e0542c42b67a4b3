#!/usr/bin/env bash
# Installs the storage servers that the object-store tests start on 127.0.0.1: moto in server
# mode (S3, from PyPI) into .venv, and Azurite (Azure Blob Storage, from npm) into
# target/servers. Idempotent: a second run with the same pins installs nothing. The tests find
# them at .venv/bin/moto_server and target/servers/node_modules/.bin/azurite-blob; a missing
# server fails those tests, it never skips them. Also Chromium (Debian's package, with apt-get
# as root, when it is missing), which tests/test_scan_metrics.py runs headless to read the
# Spark UI's SQL tab as a person sees it.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"

MOTO_PIN="moto[server]==5.2.5"
# The Python client the tests use to create containers and inspect blobs.
AZURE_BLOB_PIN="azure-storage-blob==12.31.1"
AZURITE_PIN="azurite@3.35.0"

if [[ ! -x .venv/bin/python ]]; then
  echo "servers.sh: .venv is missing; run build/package.sh first" >&2
  exit 1
fi
if ! .venv/bin/python -m pip show moto 2>/dev/null | grep -q '^Version: 5.2.5$' \
  || ! .venv/bin/python -m pip show azure-storage-blob 2>/dev/null | grep -q '^Version: 12.31.1$'; then
  echo "servers.sh: installing ${MOTO_PIN} and ${AZURE_BLOB_PIN} into .venv"
  .venv/bin/python -m pip --disable-pip-version-check -q install "${MOTO_PIN}" "${AZURE_BLOB_PIN}"
fi

SERVERS="target/servers"
if [[ ! -x "${SERVERS}/node_modules/.bin/azurite-blob" ]] \
  || ! grep -q '"version": "3.35.0"' "${SERVERS}/node_modules/azurite/package.json" 2>/dev/null; then
  if ! command -v npm >/dev/null; then
    echo "servers.sh: npm is not installed; Azurite needs Node.js and npm" >&2
    exit 1
  fi
  echo "servers.sh: installing ${AZURITE_PIN} into ${SERVERS}"
  mkdir -p "${SERVERS}"
  npm install --prefix "${SERVERS}" --no-audit --no-fund --loglevel=error "${AZURITE_PIN}"
fi
if ! command -v chromium >/dev/null; then
  if [[ "$(id -u)" != 0 ]]; then
    echo "servers.sh: chromium is missing, and installing it (apt-get) needs root" >&2
    exit 1
  fi
  echo "servers.sh: installing chromium (apt-get)"
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends chromium
fi
echo "servers.sh: ready: moto 5.2.5, azurite $("${SERVERS}/node_modules/.bin/azurite-blob" --version), $(chromium --version 2>/dev/null)"

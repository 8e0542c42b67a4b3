#!/usr/bin/env bash
# Image build step 1: the Java 17 runtime Spark 3.5 runs on, and OpenSSL 3, which tantivy4java's
# native library links (libssl.so.3). Installs them with apt-get when they are missing (the image
# build, as root); where both are present (a machine that has them, as the test suite's) it only
# checks them. Prints what it found.
set -euo pipefail

have_java() { command -v java >/dev/null && java -version 2>&1 | grep -q 'version "17'; }
have_ssl() { ldconfig -p 2>/dev/null | grep -q 'libssl.so.3' || [[ -e /usr/lib/x86_64-linux-gnu/libssl.so.3 ]]; }

if ! have_java || ! have_ssl; then
  if [[ "$(id -u)" != 0 ]]; then
    echo "install_java.sh: Java 17 or libssl3 is missing, and installing them needs root" >&2
    exit 1
  fi
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
    openjdk-17-jre-headless libssl3 procps
  rm -rf /var/lib/apt/lists/*
fi
have_java && have_ssl
echo "install_java.sh: $(java -version 2>&1 | head -n 1); libssl.so.3 present"

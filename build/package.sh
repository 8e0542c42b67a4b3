#!/usr/bin/env bash
# Builds the plugin assembly JARs for Spark 3.5 / Scala 2.12 and Spark 4 / Scala 2.13 (compiled
# against Spark 4.0; it serves Spark 4.0, 4.1 and 4.2) and ships
# both inside the Python package (python/indextables/jars/); publishes both thin plugin JARs (indextables-spark_2.12 and _2.13)
# with their POMs to target/maven-repo (for `spark-submit --packages`),
# copies Delta Lake's JARs (delta-spark, delta-storage) and Iceberg's Spark runtime to
# target/oracle-jars for the pytest oracle (tests/delta_oracle.py) and the Iceberg companion tests
# (and those of Spark 4.0 to target/oracle-jars-4.0, Delta's of Spark 4.2 to
# target/oracle-jars-4.2), and installs the package with the test tools (pytest, and ruff and mypy for build/test.sh's lint
# stage) into .venv/ at the repository root; and the package under PySpark 4.2 into .venv-spark4
# and under PySpark 4.0 into .venv-spark40 (build/test.sh's runs on those Sparks), and as a Spark
# Connect client with `pyspark-client` 4.2 and no JVM into .venv-connect4 (tests/test_connect.py).
# Idempotent: run it as often as you like; it prints a line per step and sbt's log on failure.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "${ROOT}"

PYSPARK_PIN="pyspark==3.5.9"
# pytest, and pytest-xdist for build/test.sh's runs on two workers (a Spark session each).
TEST_PINS=("pytest" "pytest-xdist==3.8.0")
# The linters build/test.sh runs (config: ruff.toml and mypy.ini at the root); pinned, so that a
# new release's new rules cannot fail a build that did not change.
LINT_PINS=("ruff==0.17.6" "mypy==2.4.1")
# The ranking oracle of the tests (tests/ranking_oracle.py): PyPI tantivy scores queries over
# gensim's bundled Lee corpus; pinned, as a new release could change the corpus or the scores.
ORACLE_PINS=("tantivy==0.27.0" "gensim==4.4.0")
# PySpark's Spark Connect client (grpcio, pandas, pyarrow), for the tests of the package over a
# Connect server (tests/test_connect.py); pyarrow 18 as gensim keeps NumPy below 2.
CONNECT_PINS=("pyspark[connect]==3.5.9" "pyarrow==18.1.0")
# PySpark 4.2 for the pytest run on Spark 4.2 (.venv-spark4), and PySpark 4.0 (the newest 4.0.x on
# PyPI) for the run on Spark 4.0 of the companions over Iceberg (no Iceberg runtime exists for
# 4.2) and over Delta 4.0 (.venv-spark40); both with what their tests import beyond pytest and the oracles: pyarrow
# (Connect), the S3 and Azure clients (tests/storage_servers.py) and PyYAML. The one Spark 4 JAR
# serves both.
PYSPARK4_PIN="pyspark[connect]==4.2.1"
# Spark Connect's Python-only client (no JVM, no py4j) for .venv-connect4: the 4.2 run of
# tests/test_connect.py runs its client there, against a 4.2 server. 4.2.0 is the newest on PyPI;
# pandas below 3, as PySpark 4.2 asks.
CONNECT4_PINS=("pyspark-client==4.2.0" "pandas==2.3.3")
PYSPARK40_PIN="pyspark[connect]==4.0.5"
SPARK4_TEST_PINS=("pyarrow==18.1.0" "azure-storage-blob==12.31.1" "boto3==1.44.8" "PyYAML==6.0.4")
VERSION="$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' python/indextables/_version.py)"
if [[ -z "${VERSION}" ]]; then
  echo "package.sh: no __version__ in python/indextables/_version.py" >&2
  exit 1
fi
JAR_NAME="indextables-spark-assembly-${VERSION}.jar"
BUILT_JAR="jvm/target/scala-2.12/${JAR_NAME}"
# The Spark 4 / Scala 2.13 assembly (`++2.13.x`: the 2.13 entry of the build's crossScalaVersions),
# built and published beside the Spark 3.5 one, and shipped in the Python package with it.
JAR_NAME_213="indextables-spark_2.13-assembly-${VERSION}.jar"
BUILT_JAR_213="jvm/target/scala-2.13/${JAR_NAME_213}"
JARS_DIR="python/indextables/jars"

# The virtual environments' dependencies install while sbt builds (pip waits on the network, sbt
# on the CPU); the package itself goes into each once its JARs are in place.
VENVS=(.venv .venv-spark4 .venv-spark40 .venv-connect4)
# install_deps VENV PACKAGE...: creates VENV if it is missing, and installs the packages into it.
install_deps() {
  local venv="$1"
  shift
  if [[ ! -x "${venv}/bin/python" ]]; then
    echo "package.sh: creating ${venv} with ${PYTHON:-python3}"
    "${PYTHON:-python3}" -m venv "${venv}"
  fi
  echo "package.sh: installing $* into ${venv}"
  "${venv}/bin/python" -m pip --disable-pip-version-check -q install "$@"
}
all_deps() {
  # Under PySpark 3.5 in .venv, with the linters, the oracles and the Connect client of the tests.
  install_deps .venv "${PYSPARK_PIN}" "${TEST_PINS[@]}" "${LINT_PINS[@]}" "${ORACLE_PINS[@]}" \
    "${CONNECT_PINS[@]}"
  # Under PySpark 4.2 in .venv-spark4 and PySpark 4.0 in .venv-spark40: build/test.sh's pytest
  # runs on Spark 4.2 and 4.0.
  install_deps .venv-spark4 "${PYSPARK4_PIN}" "${TEST_PINS[@]}" "${ORACLE_PINS[@]}" \
    "${SPARK4_TEST_PINS[@]}"
  install_deps .venv-spark40 "${PYSPARK40_PIN}" "${TEST_PINS[@]}" "${ORACLE_PINS[@]}" \
    "${SPARK4_TEST_PINS[@]}"
  # As a Spark Connect client installs it: `pyspark-client` (the package's `pyspark-client`
  # extra), no JVM, no py4j.
  install_deps .venv-connect4 "${CONNECT4_PINS[@]}"
}
mkdir -p target
PIP_LOG="target/package-pip.log"
# In a process group of its own (job control on, for this one job), so that an early exit (a
# failed build, Ctrl-C, a cancelled CI run) stops the pip or venv it is running, not only its
# subshell.
set -m
all_deps >"${PIP_LOG}" 2>&1 &
DEPS_PID=$!
set +m
trap 'kill -- "-${DEPS_PID}" 2>/dev/null || true' EXIT

SBT_TASKS=("spark/assembly" "spark/publish" "bench/oracleJars" "oracles40/oracleJars"
  "oracles42/oracleJars"
  "++2.13.x spark/assembly" "++2.13.x spark/publish")
echo "package.sh: building ${JAR_NAME} and ${JAR_NAME_213} (Scala 2.12 and 2.13), publishing both thin JARs to target/maven-repo and copying the Delta and Iceberg oracle JARs of Spark 3.5 and 4.0 to target/oracle-jars and target/oracle-jars-4.0, and Delta's of Spark 4.2 to target/oracle-jars-4.2 (sbt ${SBT_TASKS[*]})"
SBT_LOG="target/package-sbt.log"
if ! build/sbt "${SBT_TASKS[@]}" </dev/null >"${SBT_LOG}" 2>&1; then
  tail -n 60 "${SBT_LOG}" >&2
  echo "package.sh: sbt ${SBT_TASKS[*]} failed; full log in ${ROOT}/${SBT_LOG}" >&2
  exit 1
fi
for built in "${BUILT_JAR}" "${BUILT_JAR_213}"; do
  if [[ ! -f "${built}" ]]; then
    echo "package.sh: sbt succeeded but ${built} is missing" >&2
    exit 1
  fi
done

# The package ships both assemblies; indextables.jar_path() picks the one for the installed PySpark.
mkdir -p "${JARS_DIR}"
find "${JARS_DIR}" -maxdepth 1 -name '*.jar' ! -name "${JAR_NAME}" ! -name "${JAR_NAME_213}" -delete
for built in "${BUILT_JAR}" "${BUILT_JAR_213}"; do
  if ! cmp -s "${built}" "${JARS_DIR}/$(basename "${built}")"; then
    cp "${built}" "${JARS_DIR}/$(basename "${built}")"
  fi
done

if ! wait "${DEPS_PID}"; then
  tail -n 40 "${PIP_LOG}" >&2
  echo "package.sh: installing the virtual environments' dependencies failed; full log in ${ROOT}/${PIP_LOG}" >&2
  exit 1
fi
trap - EXIT
cat "${PIP_LOG}"
# This package (without its extras) into each. setuptools never cleans python/build/lib, so a
# stale JAR there would end up in the package: it is removed around the install. Same version,
# new JAR: the package is reinstalled by force.
for venv in "${VENVS[@]}"; do
  echo "package.sh: installing ./python (indextables-spark ${VERSION}) into ${venv}"
  rm -rf python/build python/*.egg-info
  "${venv}/bin/python" -m pip --disable-pip-version-check -q install --force-reinstall --no-deps \
    ./python
done
rm -rf python/build python/*.egg-info

for venv in "${VENVS[@]}"; do
  "${venv}/bin/python" -c 'import indextables, os; assert os.path.isfile(indextables.jar_path())'
  echo "package.sh: ready: ${venv}: $("${venv}/bin/python" -c 'import indextables; print(indextables.jar_path())')"
done

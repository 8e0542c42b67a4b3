"""`spark-submit --packages io.indextables:indextables-spark_<scala>:<version>` from the Maven
repository directory build/package.sh publishes (target/maven-repo): the POM, the thin JAR, and
a real spark-submit on a fresh Ivy cache that writes a table and searches it. The artifact is the
one for this run's Spark line: `_2.12` under PySpark 3.5, `_2.13` under PySpark 4 (build/test.sh
runs this file on Spark 3.5 and 4.0)."""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pyspark
import pytest

import indextables
import indextables.session

REPO_ROOT = Path(__file__).resolve().parent.parent
MAVEN_REPO = REPO_ROOT / "target" / "maven-repo"
SCALA = "2.12" if indextables.session.spark_line() == "3.5" else "2.13"
ARTIFACT = f"indextables-spark_{SCALA}"
COORDINATES = f"io.indextables:{ARTIFACT}:{indextables.__version__}"
SPARK_SUBMIT = Path(pyspark.__file__).parent / "bin" / "spark-submit"
POM_NS = {"m": "http://maven.apache.org/POM/4.0.0"}


@pytest.fixture(scope="module")
def published() -> Path:
    folder = MAVEN_REPO / "io" / "indextables" / ARTIFACT / indextables.__version__
    if not (folder / f"{ARTIFACT}-{indextables.__version__}.pom").is_file():
        pytest.fail(f"{COORDINATES} is not published in {MAVEN_REPO}: run build/package.sh")
    return folder


def _dependencies(pom: Path) -> dict[str, dict[str, str]]:
    root = ET.parse(pom).getroot()
    found: dict[str, dict[str, str]] = {}
    for dep in root.iterfind("m:dependencies/m:dependency", POM_NS):
        fields = {child.tag.split("}")[1]: (child.text or "") for child in dep}
        found[f"{fields['groupId']}:{fields['artifactId']}"] = fields
    return found


def test_the_pom_provides_spark_and_scala_and_names_the_rest(published: Path) -> None:
    deps = _dependencies(published / f"{ARTIFACT}-{indextables.__version__}.pom")
    for provided in [
        f"org.apache.spark:spark-sql_{SCALA}",
        "org.scala-lang:scala-library",
        "org.apache.avro:avro",
        "org.antlr:antlr4-runtime",
    ]:
        assert deps[provided].get("scope") == "provided", (provided, deps.get(provided))
    tantivy = deps["io.indextables:tantivy4java"]
    assert (
        tantivy.get("classifier") == "linux-x86_64" and tantivy.get("scope", "compile") == "compile"
    )
    for needed in [
        "software.amazon.awssdk:s3",
        "software.amazon.awssdk:sts",
        "software.amazon.awssdk:apache5-client",
        "com.azure:azure-storage-blob",
        "com.azure:azure-identity",
        "com.azure:azure-core-http-jdk-httpclient",
        "org.apache.arrow:arrow-c-data",
    ]:
        assert deps[needed].get("scope", "compile") == "compile", needed
    # Test-scoped entries (scalatest) are never fetched for a user.
    assert {k for k, d in deps.items() if d.get("scope") == "test"} == {
        f"org.scalatest:scalatest_{SCALA}"
    }


def test_the_published_jar_is_thin(published: Path) -> None:
    jar = published / f"{ARTIFACT}-{indextables.__version__}.jar"
    with zipfile.ZipFile(jar) as archive:
        names = archive.namelist()
    assert "io/indextables/spark/extensions/IndexTables4SparkExtensions.class" in names
    assert "io/indextables/spark/build.properties" in names
    for bundled in ["software/amazon/", "com/azure/", "io/indextables/tantivy4java/", "scala/"]:
        assert not any(n.startswith(bundled) for n in names), bundled


SEARCH_JOB = """
import sys
from pyspark.sql import SparkSession
spark = SparkSession.builder.getOrCreate()
jvm = spark.sparkContext._jvm
loader = jvm.java.lang.Thread.currentThread().getContextClassLoader()  # holds --packages' JARs
cls = loader.loadClass("io.indextables.spark.BuildInfo$")
print("from", cls.getProtectionDomain().getCodeSource().getLocation().toString())
path = sys.argv[1]
rows = [(i, f"request {i} " + ("timed out" if i % 5 == 0 else "served")) for i in range(500)]
df = spark.createDataFrame(rows, "id long, message string")
df.write.format("indextables").option(
    "spark.indextables.indexing.typemap.message", "text").save(path)
found = spark.sql(
    f"SELECT id FROM indextables.`{path}` WHERE message indexquery 'timed AND out'").collect()
print("found", sorted(r.id for r in found) == list(range(0, 500, 5)), len(found))
spark.stop()
"""


def test_spark_submit_packages_resolves_the_plugin_and_searches(
    published: Path, tmp_path: Path
) -> None:
    job = tmp_path / "job.py"
    job.write_text(SEARCH_JOB)
    ivy = tmp_path / "ivy"
    command = [
        str(SPARK_SUBMIT),
        "--master",
        "local[2]",
        "--packages",
        COORDINATES,
        "--repositories",
        MAVEN_REPO.as_uri(),
        "--conf",
        f"spark.jars.ivy={ivy}",
        "--conf",
        f"spark.sql.extensions={indextables.EXTENSIONS_CLASS}",
        "--conf",
        f"spark.sql.catalog.spark_catalog={indextables.CATALOG_CLASS}",
        "--conf",
        "spark.ui.enabled=false",
        str(job),
        str(tmp_path / "table"),
    ]
    # The job's Python is this one (with pyspark); the plugin comes only from --packages.
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    run = subprocess.run(command, capture_output=True, text=True, timeout=1500, env=env)
    assert run.returncode == 0, run.stdout + run.stderr[-8000:]
    lines = dict(line.split(" ", 1) for line in run.stdout.splitlines() if " " in line)
    # The plugin came from the fresh Ivy cache, as the thin JAR, not from the pip package.
    location = lines["from"]
    assert str(ivy) in location and location.endswith(
        f"io.indextables_{ARTIFACT}-{indextables.__version__}.jar"
    ), location
    assert lines["found"] == "True 100"
    fetched = {p.name for p in (ivy / "jars").iterdir()}
    assert f"io.indextables_tantivy4java-{_t4j()}-linux-x86_64.jar" in fetched, sorted(fetched)
    assert not any(n.startswith("io.netty") for n in fetched), sorted(fetched)
    assert not any(n.startswith("org.apache.spark") for n in fetched), sorted(fetched)


def _t4j() -> str:
    import re

    match = re.search(r'val tantivy4javaVersion = "([^"]+)"', (REPO_ROOT / "build.sbt").read_text())
    assert match
    return match[1]

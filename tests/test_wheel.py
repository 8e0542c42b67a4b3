"""The pip wheel as a user gets it: its platform tag, and a fresh virtual environment with only
the wheel installed, where `configure_spark` and an `indexquery` work and
`python -m indextables` reports the versions."""

from __future__ import annotations

import re
import subprocess
import zipfile
from pathlib import Path

import pyspark

import indextables
import indextables.session

REPO_ROOT = Path(__file__).resolve().parent.parent

NATIVE_LIBRARY = "native/libtantivy4java.so"


def _glibc_baseline(library: Path) -> tuple[int, int]:
    """The newest GLIBC_x.y symbol version the shared library needs (objdump -T)."""
    dump = subprocess.run(
        ["objdump", "-T", str(library)], check=True, capture_output=True, text=True
    ).stdout
    versions = {tuple(int(p) for p in v.split(".")) for v in re.findall(r"GLIBC_(\d+\.\d+)", dump)}
    newest = max(versions)
    return newest[0], newest[1]


def test_the_wheel_is_tagged_for_the_platform_of_its_native_library(
    built_wheel: Path, tmp_path: Path
) -> None:
    name = built_wheel.name
    match = re.fullmatch(
        rf"indextables_spark-{re.escape(indextables.__version__)}-py3-none-"
        r"manylinux_(\d+)_(\d+)_x86_64\.whl",
        name,
    )
    assert match, f"not a manylinux x86_64 wheel: {name}"
    with zipfile.ZipFile(built_wheel) as wheel:
        info = wheel.read(f"indextables_spark-{indextables.__version__}.dist-info/WHEEL").decode()
        jars = sorted(n for n in wheel.namelist() if n.endswith(".jar"))
        # One assembly per Scala version: 2.12 for Spark 3.5, 2.13 for Spark 4.0, 4.1 and 4.2.
        assert jars == sorted(
            {f"indextables/jars/{name}" for name in indextables.session.SPARK_LINE_JARS.values()}
        ), jars
        jar_name = f"indextables/jars/indextables-spark-assembly-{indextables.__version__}.jar"
        (tmp_path / "plugin.jar").write_bytes(wheel.read(jar_name))
        assert "indextables/py.typed" in wheel.namelist()
    assert "Root-Is-Purelib: false" in info
    assert f"Tag: py3-none-manylinux_{match[1]}_{match[2]}_x86_64" in info
    with zipfile.ZipFile(tmp_path / "plugin.jar") as jar:
        linux = [n for n in jar.namelist() if n.endswith(".so")]
        for name in linux:
            (tmp_path / Path(name).name).write_bytes(jar.read(name))
    # tantivy4java has only a Linux x86-64 build (arrow-c-data also ships its macOS and Windows
    # builds, unused on Linux). Every Linux library is x86-64, and the tag's glibc is exactly the
    # newest any of them needs: tantivy4java's.
    assert NATIVE_LIBRARY in linux, linux
    baselines = {}
    for name in linux:
        library = tmp_path / Path(name).name
        header = subprocess.run(
            ["objdump", "-f", str(library)], check=True, capture_output=True, text=True
        ).stdout
        assert "elf64-x86-64" in header, (name, header)
        baselines[name] = _glibc_baseline(library)
    assert max(baselines.values()) == baselines[NATIVE_LIBRARY] == (int(match[1]), int(match[2]))


QUERY_SCRIPT = """
import sys, tempfile
from pyspark.sql import SparkSession
from pyspark.sql import functions as F
import indextables
from indextables.functions import indexquery

print("module", indextables.__file__)
spark = indextables.configure_spark(
    SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
).getOrCreate()
path = tempfile.mkdtemp() + "/t"
rows = [(i, "ERROR" if i % 3 == 0 else "INFO",
         f"request {i} " + ("timed out" if i % 4 == 0 else "ok")) for i in range(400)]
df = spark.createDataFrame(rows, "id long, level string, message string")
df.write.format("indextables").option(
    "spark.indextables.indexing.typemap.message", "text").save(path)
spark.read.format("indextables").load(path).createOrReplaceTempView("t")
sql = spark.sql("SELECT id FROM t WHERE message indexquery '\\\"timed out\\\"' AND level = 'ERROR'")
col = spark.read.format("indextables").load(path).filter(
    indexquery("message", '"timed out"') & (F.col("level") == "ERROR")).select("id")
plan = col._jdf.queryExecution().executedPlan().toString()
print("sql", sorted(r.id for r in sql.collect()))
print("column", sorted(r.id for r in col.collect()))
print("pushed", "PushedIndexQuery" in plan)
try:
    spark.read.format("indextables").load(path + "-missing").collect()
except indextables.TableNotFoundError as e:
    print("error", e.error_class)
spark.stop()
"""


def test_a_fresh_venv_with_the_wheel_configures_spark_and_searches(
    fresh_venv: Path, tmp_path: Path
) -> None:
    run = subprocess.run(
        [str(fresh_venv), "-c", QUERY_SCRIPT],
        cwd=tmp_path,  # not the checkout: the package must come from the venv
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    lines = dict(line.split(" ", 1) for line in run.stdout.splitlines() if " " in line)
    assert lines["module"].startswith(str(fresh_venv.parent.parent)), lines["module"]
    expected = [i for i in range(400) if i % 3 == 0 and i % 4 == 0]
    assert lines["sql"] == lines["column"] == str(expected)
    assert lines["pushed"] == "True"
    assert lines["error"] == "INDEXTABLES_TABLE_NOT_FOUND"


def test_python_m_indextables_prints_the_versions(fresh_venv: Path, tmp_path: Path) -> None:
    def run(*args: str) -> str:
        return subprocess.run(
            [str(fresh_venv), "-m", "indextables", *args],
            cwd=tmp_path,
            check=True,
            capture_output=True,
            text=True,
        ).stdout

    assert run("--version").strip() == f"indextables-spark {indextables.__version__}"
    info = run("info")
    fields = dict(line.split(": ", 1) for line in info.splitlines())
    assert fields["indextables-spark"] == indextables.__version__
    assert fields["jar version"] == indextables.__version__
    assert fields["jar"].startswith(str(fresh_venv.parent.parent))
    assert fields["pyspark"] == pyspark.__version__, fields
    assert fields["pyspark kind"] == "classic (with Spark's JVM)"
    line = indextables.session.spark_line()
    assert fields["jar chosen because"] == (
        f"PySpark {pyspark.__version__} is installed: the JAR of the Spark {line} line"
    )
    assert fields["jar built for spark"] == _spark_line_value(line, "sparkVersion")
    assert fields["tantivy4java"] == _build_sbt_value("tantivy4javaVersion")


def test_info_in_the_test_environment_reads_the_installed_jar() -> None:
    from indextables.__main__ import info_lines

    fields = dict(line.split(": ", 1) for line in info_lines())
    assert fields["jar"] == indextables.jar_path()
    assert fields["pyspark"] == pyspark.__version__


def _build_sbt_value(name: str) -> str:
    match = re.search(rf'val {name} = "([^"]+)"', (REPO_ROOT / "build.sbt").read_text())
    assert match, name
    return match[1]


def _spark_line_value(line: str, name: str) -> str:
    """A field of the SparkLine of build.sbt that serves Spark line `line` (its `servedLines`:
    the Spark 4 JAR, built against 4.0, serves 4.0, 4.1 and 4.2)."""
    text = (REPO_ROOT / "build.sbt").read_text()
    blocks = [
        b[1]
        for b in re.finditer(r'SparkLine\((.*?)"\)\n', text, re.S)
        if re.search(rf'servedLines = Seq\([^)]*"{re.escape(line)}"', b[1])
    ]
    assert len(blocks) == 1, (line, blocks)
    match = re.search(rf'{name} = "([^"]+)"', blocks[0])
    assert match, (line, name)
    return match[1]

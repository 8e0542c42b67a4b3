"""One table format on every Spark line: a table written under PySpark 3.5 (with the Spark 3.5 /
Scala 2.12 JAR the package picks) is read under PySpark 4.2 (with the Spark 4 / Scala 2.13 JAR,
compiled against 4.0), and the other way round; and one written under PySpark 4.0 is read under
4.2 and the other way round (the same JAR on two Sparks); on both layouts. Each side runs in a
process of its own, from the virtual environment build/package.sh made for its line (.venv,
.venv-spark4 with PySpark 4.2, .venv-spark40 with PySpark 4.0); the answers are checked against
the rows themselves."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
PYTHONS = {
    "3.5": REPO_ROOT / ".venv" / "bin" / "python",
    "4.0": REPO_ROOT / ".venv-spark40" / "bin" / "python",
    "4.2": REPO_ROOT / ".venv-spark4" / "bin" / "python",
}

SCRIPT = """
import json, sys
from pyspark.sql import SparkSession
import indextables

mode, path, layout = sys.argv[1:4]
builder = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
spark = indextables.configure_spark(builder).getOrCreate()
opts = {
    "spark.indextables.indexing.typemap.message": "text",
    "spark.indextables.write.layout": layout,
}
if mode == "write":
    rows = [(i, f"host{i % 3}", f"event {i} " + ("timeout" if i % 4 == 0 else "ok"))
            for i in range(200)]
    df = spark.createDataFrame(rows, "id long, host string, message string")
    df.write.format("indextables").options(**opts).save(path)
    df.write.format("indextables").options(**opts).mode("append").save(path)
    print(json.dumps({"spark": spark.version}))
else:
    t = spark.read.format("indextables").load(path)
    hits = t.filter("message indexquery 'timeout'").select("id").collect()
    print(json.dumps({
        "spark": spark.version,
        "count": t.count(),
        "hits": sorted(r.id for r in hits),
        "host1": t.filter("host = 'host1'").count(),
    }))
spark.stop()
"""


def _run(line: str, mode: str, path: Path, layout: str, work: Path) -> dict[str, object]:
    python = PYTHONS[line]
    assert python.is_file(), f"{python} is missing: build/package.sh makes it"
    result = subprocess.run(
        [str(python), "-c", SCRIPT, mode, str(path), layout],
        cwd=work,
        capture_output=True,
        text=True,
        timeout=600,
        env={k: v for k, v in os.environ.items() if not k.startswith("PYSPARK_")},
    )
    assert result.returncode == 0, result.stderr[-4000:]
    out: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    assert str(out["spark"]).startswith(line + "."), out
    return out


@pytest.mark.parametrize("layout", ["splits", "companion"])
@pytest.mark.parametrize(
    ("writer", "reader"), [("3.5", "4.2"), ("4.2", "3.5"), ("4.0", "4.2"), ("4.2", "4.0")]
)
def test_a_table_written_on_one_spark_line_is_read_on_the_other(
    tmp_path: Path, writer: str, reader: str, layout: str
) -> None:
    path = tmp_path / "table"
    _run(writer, "write", path, layout, tmp_path)
    got = _run(reader, "read", path, layout, tmp_path)
    ids = range(200)
    assert got["count"] == 400
    assert got["hits"] == sorted([i for i in ids if i % 4 == 0] * 2)
    assert got["host1"] == 2 * sum(1 for i in ids if i % 3 == 1)

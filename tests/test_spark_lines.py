"""One table format on every Spark line: a table written under PySpark 3.5 (with the Spark 3.5 /
Scala 2.12 JAR the package picks) is read under PySpark 4.2 (with the Spark 4 / Scala 2.13 JAR,
compiled against 4.0), and the other way round; and one written under PySpark 4.0 is read under
4.2 and the other way round (the same JAR on two Sparks); on both layouts. Each side runs in a
process of its own (one for both layouts), from the virtual environment build/package.sh made
for its line (.venv, .venv-spark4 with PySpark 4.2, .venv-spark40 with PySpark 4.0); the answers
are checked against the rows themselves."""

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

mode, root = sys.argv[1:3]
builder = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
spark = indextables.configure_spark(builder).getOrCreate()
answers = {"spark": spark.version}
for layout in ("splits", "companion"):
    path = f"{root}/{layout}"
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
    else:
        t = spark.read.format("indextables").load(path)
        hits = t.filter("message indexquery 'timeout'").select("id").collect()
        answers[layout] = {
            "count": t.count(),
            "hits": sorted(r.id for r in hits),
            "host1": t.filter("host = 'host1'").count(),
        }
print(json.dumps(answers))
spark.stop()
"""


def _run(line: str, mode: str, root: Path, work: Path) -> dict[str, object]:
    python = PYTHONS[line]
    assert python.is_file(), f"{python} is missing: build/package.sh makes it"
    result = subprocess.run(
        [str(python), "-c", SCRIPT, mode, str(root)],
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


@pytest.mark.parametrize(
    ("writer", "reader"), [("3.5", "4.2"), ("4.2", "3.5"), ("4.0", "4.2"), ("4.2", "4.0")]
)
def test_tables_written_on_one_spark_line_are_read_on_the_other(
    tmp_path: Path, writer: str, reader: str
) -> None:
    root = tmp_path / "tables"
    _run(writer, "write", root, tmp_path)
    got = _run(reader, "read", root, tmp_path)
    ids = range(200)
    for layout in ("splits", "companion"):
        table = got[layout]
        assert isinstance(table, dict), got
        assert table["count"] == 400, (layout, table)
        assert table["hits"] == sorted([i for i in ids if i % 4 == 0] * 2), (layout, table)
        assert table["host1"] == 2 * sum(1 for i in ids if i % 3 == 1), (layout, table)

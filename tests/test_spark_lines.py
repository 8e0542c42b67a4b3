"""One table format on every Spark line, on both layouts, in a ring of four processes: a table
written under PySpark 3.5 (with the Spark 3.5 / Scala 2.12 JAR the package picks) is read under
PySpark 4.2 (with the Spark 4 / Scala 2.13 JAR, compiled against 4.0), which writes one that
PySpark 4.0 reads (the same JAR on another Spark), which writes one that PySpark 3.5 reads. So a
table crosses between the lines both ways, and between two Sparks of one JAR. Each process runs
from the virtual environment build/package.sh made for its line (.venv, .venv-spark4 with
PySpark 4.2, .venv-spark40 with PySpark 4.0); the answers are checked against the rows
themselves."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

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

read_root, write_root = sys.argv[1:3]
builder = SparkSession.builder.master("local[1]").config("spark.ui.enabled", "false")
spark = indextables.configure_spark(builder).getOrCreate()
answers = {"spark": spark.version}
for layout in ("splits", "companion"):
    if read_root != "-":
        t = spark.read.format("indextables").load(f"{read_root}/{layout}")
        hits = t.filter("message indexquery 'timeout'").select("id").collect()
        answers[layout] = {
            "count": t.count(),
            "hits": sorted(r.id for r in hits),
            "host1": t.filter("host = 'host1'").count(),
        }
    if write_root != "-":
        opts = {
            "spark.indextables.indexing.typemap.message": "text",
            "spark.indextables.write.layout": layout,
        }
        rows = [(i, f"host{i % 3}", f"event {i} " + ("timeout" if i % 4 == 0 else "ok"))
                for i in range(200)]
        df = spark.createDataFrame(rows, "id long, host string, message string")
        path = f"{write_root}/{layout}"
        df.write.format("indextables").options(**opts).save(path)
        df.write.format("indextables").options(**opts).mode("append").save(path)
print(json.dumps(answers))
spark.stop()
"""


def _run(line: str, read: Path | None, write: Path | None, work: Path) -> dict[str, object]:
    """One process under `line`'s PySpark: reads the tables under `read`, then writes its own
    under `write`; what it read."""
    python = PYTHONS[line]
    assert python.is_file(), f"{python} is missing: build/package.sh makes it"
    result = subprocess.run(
        [str(python), "-c", SCRIPT, str(read or "-"), str(write or "-")],
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


# Each line writes once and reads the table the line before it wrote.
RING = ("3.5", "4.2", "4.0", "3.5")


def test_tables_written_on_one_spark_line_are_read_on_the_other(tmp_path: Path) -> None:
    ids = range(200)
    for step, (writer, reader) in enumerate(zip(RING, RING[1:])):
        root = tmp_path / f"written-by-{writer}"
        if step == 0:
            _run(writer, None, root, tmp_path)
        last = step == len(RING) - 2
        got = _run(reader, root, None if last else tmp_path / f"written-by-{reader}", tmp_path)
        for layout in ("splits", "companion"):
            table = got[layout]
            assert isinstance(table, dict), (writer, reader, got)
            assert table["count"] == 400, (writer, reader, layout, table)
            want_hits = sorted([i for i in ids if i % 4 == 0] * 2)
            assert table["hits"] == want_hits, (writer, reader, layout, table)
            assert table["host1"] == 2 * sum(1 for i in ids if i % 3 == 1), (writer, reader, table)

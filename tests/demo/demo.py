"""IndexTables demo: write a realistic log table, read it back and search it.

Run with `bash build/demo.sh` (it builds and installs the package first). Messages come from the
loghub templates in ../shared/data/loghub next to the repository when present (github.com/logpai/
loghub; cite the loghub paper, ISSRE 2023), else from built-in templates of the same shape.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

import indextables

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tests/, for logdata

from logdata import LOGS_SCHEMA, generate_logs

TESTS_DIR = Path(__file__).resolve().parent.parent
LOGHUB_DIR = TESTS_DIR.parent.parent / "shared" / "data" / "loghub"
DEMO_COLUMNS = ["ts", "level", "component", "host", "latency_ms", "message"]


@contextmanager
def timed(label: str) -> Iterator[None]:
    start = time.perf_counter()
    yield
    print(f"  [{time.perf_counter() - start:6.2f}s] {label}")


def scan_line(df: DataFrame) -> str:
    plan = str(df._jdf.queryExecution().executedPlan().toString())
    lines = [line.strip().lstrip(":+- ") for line in plan.splitlines() if "Scan" in line]
    return lines[0] if lines else plan


def search(table: DataFrame, title: str, condition: Column) -> None:
    print(f"\n{title}")
    result = table.filter(condition)
    print(f"  plan: {scan_line(result)}")
    with timed("count"):
        count = result.count()
    print(f"  {count} matching rows")
    with timed("first 3 rows"):
        rows = result.orderBy("ts").limit(3).collect()
    for row in rows:
        print(
            f"    {row.ts} {row.level:<5} {row.host} {row.latency_ms} ms  {str(row.message)[:90]}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=120_000, help="rows to generate (>= 100000)")
    parser.add_argument("--path", help="table path (default: a temporary directory)")
    args = parser.parse_args()

    builder = (
        SparkSession.builder.master("local[2]")
        .appName("indextables-demo")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "2g")
        .config("spark.sql.session.timeZone", "UTC")
    )
    spark = indextables.configure_spark(builder).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    print(
        f"IndexTables {indextables.__version__}, Spark {spark.version}, "
        f"JAR {indextables.jar_path()}"
    )

    with tempfile.TemporaryDirectory(prefix="indextables-demo-") as tmp:
        path = args.path or str(Path(tmp) / "logs")
        print("\nGenerating data")
        with timed(f"{args.rows} rows"):
            rows, source = generate_logs(args.rows, seed=1, loghub_dir=LOGHUB_DIR)
            logs = spark.createDataFrame(rows, LOGS_SCHEMA).select(*DEMO_COLUMNS).repartition(2)
            logs = logs.cache()
            logs.count()
        print(f"  text from {source}")

        print(f"\nWriting {path}")
        with timed("write (message typed as text)"):
            (
                logs.write.format("indextables")
                .option("spark.indextables.indexing.typemap.message", "text")
                .partitionBy()
                .mode("overwrite")
                .save(path)
            )
        splits = sorted(Path(path).rglob("*.split"))
        size = sum(p.stat().st_size for p in splits)
        print(f"  {len(splits)} split files, {size / 1e6:.1f} MB")

        print("\nReading back")
        table = spark.read.format("indextables").load(path)
        with timed("count"):
            print(f"  {table.count()} rows")

        search(table, "level == 'ERROR'", F.col("level") == "ERROR")
        search(table, "message contains 'failed'", F.col("message").contains("failed"))
        search(
            table,
            "latency_ms between 500 and 1000 and host starts with 'node-1'",
            F.col("latency_ms").between(500, 1000) & F.col("host").startswith("node-1"),
        )
        search(
            table,
            "message contains 'block' or 'connection', level != 'INFO'",
            (F.col("message").contains("block") | F.col("message").contains("connection"))
            & (F.col("level") != "INFO"),
        )
    spark.stop()


if __name__ == "__main__":
    main()

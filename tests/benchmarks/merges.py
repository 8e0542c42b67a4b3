"""MERGE INTO of changed rows: IndexTables (both layouts) against Delta Lake 3.3.2, on the same
rows, with the same statement, in one session.

    .venv/bin/python tests/benchmarks/merges.py --rows 2000000 --appends 20 --runs 5 \\
        --changed 10000 --out target/bench-merges

Generates the benchmark suite's log rows (tests/benchmarks/datagen.py) with a unique `id`, and
writes them as a table of `--appends` appends for each IndexTables layout and for Delta Lake
(deletion vectors on, as Delta's MERGE then marks rows rather than rewriting files). Then,
`--runs` times, a different set of `--changed` rows each time (picked by a hash of `id` and the
run, collected, so the source is the same local rows for every table) has its `level` and
`message` changed, and each table runs

    MERGE INTO <table> t USING <changes> s ON t.id = s.id WHEN MATCHED THEN UPDATE SET *

timed to its result. The counts each statement returns must equal Delta's, and after the runs
every table must hold the same rows as Delta's (count, and a sum of row hashes). Needs Delta
Lake's JARs in target/oracle-jars (build/package.sh). Writes <out>/merges.json and .md.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import datagen
import delta_oracle
from bench_session import add_session_args, local_session, write_report

LOGHUB = Path(__file__).resolve().parents[3] / "shared" / "data" / "loghub"
COLUMNS = ["id", "ts", "level", "component", "host", "latency_ms", "message"]


def _source(spark: SparkSession, out: Path, rows: int, appends: int) -> Path:
    """The generated rows with a unique `id`, one directory `batch=<i>` per append."""
    source_dir = out / f"source-{rows}x{appends}.parquet"
    if not source_dir.exists():
        loghub = LOGHUB if LOGHUB.is_dir() else None
        df, _ = datagen.generate(spark, rows, appends, 23, loghub)
        df.withColumn("id", F.monotonically_increasing_id()).withColumn(
            "batch", F.spark_partition_id()
        ).select(*COLUMNS, "batch").write.partitionBy("batch").parquet(str(source_dir))
    return source_dir


def _checksum(df: DataFrame) -> tuple[int, int]:
    """(rows, sum of a hash of every row): equal for equal row multisets, almost surely."""
    (row,) = df.select(
        F.count(F.lit(1)).alias("n"), F.sum(F.xxhash64(*COLUMNS).cast("decimal(38,0)")).alias("h")
    ).collect()
    return int(row.n), int(row.h or 0)


def _changes(spark: SparkSession, source: DataFrame, run: int, changed: int, rows: int) -> Any:
    """`changed` rows of `source` (about: a hash of `id` picks them), with a new `level` and
    `message`, as local rows."""
    share = max(rows // changed, 1)
    picked = source.where(F.pmod(F.xxhash64("id", F.lit(run)), F.lit(share)) == 0)
    local = picked.withColumn("level", F.lit(f"MERGED{run}")).withColumn(
        "message", F.concat("message", F.lit(f" merged in run {run}"))
    )
    return spark.createDataFrame(local.select(*COLUMNS).collect(), local.select(*COLUMNS).schema)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=2_000_000)
    p.add_argument("--appends", type=int, default=20)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--changed", type=int, default=10_000)
    p.add_argument("--layouts", default="splits,companion")
    add_session_args(p, "target/bench-merges", "6g")
    args = p.parse_args()
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    spark = local_session("merges", args.cores, args.driver_memory, extra=delta_oracle.configure)
    source_dir = _source(spark, out, args.rows, args.appends)
    source = spark.read.parquet(str(source_dir)).drop("batch")

    # The tables: name -> (statement target, reader, write seconds).
    tables: dict[str, tuple[str, Any, float]] = {}
    for layout in args.layouts.split(","):
        path = out / f"table-{layout}"
        shutil.rmtree(path, ignore_errors=True)
        start = time.perf_counter()
        for i in range(args.appends):
            spark.read.parquet(str(source_dir / f"batch={i}")).coalesce(1).write.format(
                "indextables"
            ).mode("append").option("spark.indextables.indexing.typemap.message", "text").option(
                "spark.indextables.write.layout", layout
            ).save(str(path))
        reader = spark.read.format("indextables").option(
            "spark.indextables.cache.queryCache.enabled", "false"
        )
        tables[layout] = (
            f"indextables.`{path}`",
            lambda p=path, r=reader: r.load(str(p)),
            time.perf_counter() - start,
        )
    delta_path = out / "table-delta"
    shutil.rmtree(delta_path, ignore_errors=True)
    start = time.perf_counter()
    delta = delta_oracle.DeltaTable.create(
        spark, str(delta_path), spark.read.parquet(str(source_dir / "batch=0")).drop("batch")
    )
    for i in range(1, args.appends):
        delta.append(spark.read.parquet(str(source_dir / f"batch={i}")).drop("batch").coalesce(1))
    tables["delta"] = (delta.name, delta.read, time.perf_counter() - start)

    times: dict[str, list[float]] = {name: [] for name in tables}
    changed_rows: list[int] = []
    for run in range(args.runs):
        changes = _changes(spark, source, run, args.changed, args.rows)
        changes.createOrReplaceTempView("changes")
        changed_rows.append(changes.count())
        counts: dict[str, Any] = {}
        for name, (target, _, _) in tables.items():
            statement = (
                f"MERGE INTO {target} t USING changes s ON t.id = s.id "
                "WHEN MATCHED THEN UPDATE SET *"
            )
            start = time.perf_counter()
            (counts[name],) = spark.sql(statement).collect()
            times[name].append(time.perf_counter() - start)
        for name, got in counts.items():
            if got.asDict() != counts["delta"].asDict():
                raise SystemExit(f"run {run}: {name} returned {got}, Delta {counts['delta']}")
    expected = _checksum(tables["delta"][1]())
    for name, (_, read, _) in tables.items():
        if _checksum(read()) != expected:
            raise SystemExit(f"{name}: the rows after the MERGEs are not Delta's")

    medians = {name: statistics.median(t) for name, t in times.items()}
    result = {
        "rows": args.rows,
        "appends": args.appends,
        "cores": args.cores,
        "runs": args.runs,
        "changed_rows": changed_rows,
        "write_s": {name: t[2] for name, t in tables.items()},
        "merge_runs_s": times,
        "merge_median_s": medians,
        "over_delta": {name: medians[name] / medians["delta"] for name in tables},
    }
    lines = [
        f"# MERGE INTO against Delta Lake 3.3.2: {args.rows:,} rows in {args.appends} appends, "
        f"{args.cores} cores",
        "",
        f"Medians of {args.runs} runs, each changing a different {min(changed_rows):,} to "
        f"{max(changed_rows):,} rows (`WHEN MATCHED THEN UPDATE SET *` on a unique `id`). Every "
        "statement's counts equalled Delta's, and every table held Delta's rows afterwards.",
        "",
        "| table | MERGE (median) | / Delta (goal ≤ 1) | runs |",
        "|---|---|---|---|",
    ]
    for name in tables:
        lines.append(
            f"| {name} | {medians[name]:.2f} s | {medians[name] / medians['delta']:.2f} × | "
            + ", ".join(f"{t:.2f}" for t in times[name])
            + " |"
        )
    write_report(out, "merges", result, lines)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

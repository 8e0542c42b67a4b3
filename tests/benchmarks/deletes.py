"""DELETE through deletion vectors: one user's rows by `indexquery` against the same search, and
searches and scans before and after many such deletes, on both layouts.

    .venv/bin/python tests/benchmarks/deletes.py --rows 2000000 --appends 20 --runs 5 \\
        --deletes 100 --out target/bench-deletes

Generates the benchmark suite's log rows (tests/benchmarks/datagen.py) with a `user` column of
1,000 users (about 0.1% of the rows each), writes them as a table of `--appends` appends per
layout, and then, for each layout:
  1. `--runs` times, for a different user each time: the search `user indexquery '<u>'`
     (collected), then `DELETE FROM ... WHERE user indexquery '<u>'`. Reports both medians and
     their ratio, and checks that no split file was rewritten;
  2. a selective search (a host, a latency window and a message term, different in each run) and
     a full scan of three columns (to Spark's noop sink), `--runs` times each, on the table as
     written (before step 1) and again after `--deletes` more deletes of one user each. Reports
     the medians and the after/before ratios, and checks every answer against the source rows
     less the deleted users. The same for a pushed COUNT(*), COUNT(latency_ms) GROUP BY one
     column (a different one in each run) over every row.
tantivy's query cache is off throughout. Writes <out>/deletes.json and .md, and prints the table.
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

import datagen
from bench_session import add_session_args, local_session, write_report

TYPEMAP_MESSAGE = "spark.indextables.indexing.typemap.message"
QUERY_CACHE = "spark.indextables.cache.queryCache.enabled"
LAYOUT = "spark.indextables.write.layout"
LOGHUB = Path(__file__).resolve().parents[3] / "shared" / "data" / "loghub"
USERS = 1000
AGGREGATE_GROUPS = ("host", "level", "component", "user")


def _twin(condition: str) -> str:
    """The same condition for Spark over the Parquet rows (one word of a tokenized message)."""
    for term in datagen.SEARCH_TERMS:
        condition = condition.replace(
            f"message indexquery '{term}'",
            f"lower(message) RLIKE '(^|[^a-z0-9]){term}([^a-z0-9]|$)'",
        )
    return condition


def _answer(df: DataFrame) -> list[str]:
    return sorted(repr(tuple(r)) for r in df.collect())


def _timed(action: Any, *args: Any) -> float:
    start = time.perf_counter()
    action(*args)
    return time.perf_counter() - start


def _reads(
    spark: SparkSession, path: str, source: DataFrame, runs: int, offset: int
) -> dict[str, Any]:
    """Medians of the selective search and the full scan, each answer checked on `source`."""
    table = spark.read.format("indextables").option(QUERY_CACHE, "false").load(path)
    search_times, scan_times = [], []
    for run in range(runs):
        condition = datagen.selective_condition(offset + run)
        search_times.append(_timed(lambda c: table.where(c).collect(), condition))
        got = _answer(table.where(condition).select("ts", "host", "user"))
        want = _answer(source.where(_twin(condition)).select("ts", "host", "user"))
        if got != want:
            raise SystemExit(f"{path}: {condition} gave {len(got)} rows, not {len(want)}")
        scan_times.append(
            _timed(
                lambda: (
                    table.select("ts", "host", "latency_ms")
                    .write.format("noop")
                    .mode("overwrite")
                    .save()
                )
            )
        )
    # A pushed aggregation over every row, grouped by a different column in each run.
    aggregate_times = []
    for run in range(runs):
        column = AGGREGATE_GROUPS[(offset + run) % len(AGGREGATE_GROUPS)]

        def grouped(df: DataFrame, c: str = column) -> DataFrame:
            return df.groupBy(c).agg(F.count("*").alias("n"), F.count("latency_ms").alias("m"))

        aggregate_times.append(_timed(lambda: grouped(table).collect()))
        if _answer(grouped(table)) != _answer(grouped(source)):
            raise SystemExit(f"{path}: GROUP BY {column} differs from the source rows")
    if table.count() != source.count():
        raise SystemExit(f"{path}: {table.count()} rows, not {source.count()}")
    return {
        "search_s": statistics.median(search_times),
        "scan_s": statistics.median(scan_times),
        "aggregate_s": statistics.median(aggregate_times),
        "search_runs_s": search_times,
        "scan_runs_s": scan_times,
        "aggregate_runs_s": aggregate_times,
    }


def _layout(
    spark: SparkSession, source_dir: Path, out: Path, layout: str, args: argparse.Namespace
) -> dict[str, Any]:
    path = out / f"table-{layout}"
    if path.exists():
        shutil.rmtree(path)
    start = time.perf_counter()
    for i in range(args.appends):
        spark.read.parquet(str(source_dir / f"batch={i}")).coalesce(1).write.format(
            "indextables"
        ).mode("append").option(TYPEMAP_MESSAGE, "text").option(LAYOUT, layout).save(str(path))
    write_s = time.perf_counter() - start
    name = f"indextables.`{path}`"
    source = spark.read.parquet(str(source_dir)).drop("batch")
    splits = sorted(p.name for p in path.rglob("*.split"))
    table = spark.read.format("indextables").option(QUERY_CACHE, "false").load(str(path))

    # Reads of the table as written, before any delete.
    before = _reads(spark, str(path), source, args.runs, 0)

    # 1. One user's rows: the search alone, then the DELETE that finds them the same way.
    search_times, delete_times, deleted_rows = [], [], []
    gone: list[str] = []
    for run in range(args.runs):
        user = f"user{run:04d}"
        condition = f"user indexquery '{user}'"
        search_times.append(_timed(lambda c: table.where(c).collect(), condition))
        deleted_rows.append(source.where(f"user = '{user}'").count())
        delete_times.append(_timed(spark.sql, f"DELETE FROM {name} WHERE {condition}"))
        gone.append(user)
    if sorted(p.name for p in path.rglob("*.split")) != splits:
        raise SystemExit(f"{path}: a DELETE rewrote split files")

    # 2. `--deletes` more deletes, then the same reads again.
    many_start = time.perf_counter()
    deleted_after = 0
    for k in range(args.deletes):
        user = f"user{args.runs + k:04d}"
        (counts,) = spark.sql(f"DELETE FROM {name} WHERE user indexquery '{user}'").collect()
        deleted_after += counts.num_affected_rows
        gone.append(user)
    many_s = time.perf_counter() - many_start
    alive = source.where(~F.col("user").isin(gone))
    after = _reads(spark, str(path), alive, args.runs, args.runs)
    (state,) = spark.sql(f"DESCRIBE INDEXTABLES STATE '{path}'").collect()
    search, delete = statistics.median(search_times), statistics.median(delete_times)
    return {
        "layout": layout,
        "write_s": write_s,
        "splits": len(splits),
        "search_one_user_s": search,
        "delete_one_user_s": delete,
        "delete_over_search": delete / search,
        "rows_per_user": deleted_rows,
        "search_runs_s": search_times,
        "delete_runs_s": delete_times,
        "deletes": args.deletes,
        "deletes_total_s": many_s,
        "deleted_rows": state.num_deleted_rows,
        "deleted_rows_after": deleted_after,
        "deletion_vectors": state.num_deletion_vectors,
        "reads_before": before,
        "reads_after": after,
        "search_after_over_before": after["search_s"] / before["search_s"],
        "scan_after_over_before": after["scan_s"] / before["scan_s"],
        "aggregate_after_over_before": after["aggregate_s"] / before["aggregate_s"],
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=2_000_000)
    p.add_argument("--appends", type=int, default=20)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--deletes", type=int, default=100)
    p.add_argument("--layouts", default="splits,companion")
    add_session_args(p, "target/bench-deletes", "6g")
    args = p.parse_args()
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    spark = local_session("deletes", args.cores, args.driver_memory)

    source_dir = out / f"source-{args.rows}x{args.appends}.parquet"
    if not source_dir.exists():
        loghub = LOGHUB if LOGHUB.is_dir() else None
        df, _ = datagen.generate(spark, args.rows, args.appends, 17, loghub)
        users = F.format_string("user%04d", F.pmod(F.xxhash64("ts", "message"), F.lit(USERS)))
        df.withColumn("user", users).withColumn("batch", F.spark_partition_id()).write.partitionBy(
            "batch"
        ).parquet(str(source_dir))
    results = [_layout(spark, source_dir, out, layout, args) for layout in args.layouts.split(",")]
    result = {
        "rows": args.rows,
        "appends": args.appends,
        "cores": args.cores,
        "runs": args.runs,
        "layouts": results,
    }
    lines = [
        f"# DELETE through deletion vectors: {args.rows:,} rows in {args.appends} appends, "
        f"{args.cores} cores",
        "",
        f"Medians of {args.runs} runs, tantivy's query cache off. A user is about 0.1% of the "
        "rows; each DELETE finds them with `user indexquery`. Every answer was checked against the "
        "source rows less the deleted users; no DELETE rewrote a split file.",
        "",
        "| layout | search one user | DELETE one user | ratio (goal ≤ 2) | search before / after "
        f"{args.runs + args.deletes} deletes | scan before / after | GROUP BY before / after |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        b, a = r["reads_before"], r["reads_after"]
        lines.append(
            f"| {r['layout']} | {r['search_one_user_s']:.3f} s | {r['delete_one_user_s']:.3f} s | "
            f"{r['delete_over_search']:.2f} × | {b['search_s']:.3f} / {a['search_s']:.3f} s "
            f"({r['search_after_over_before']:.2f} ×) | {b['scan_s']:.3f} / {a['scan_s']:.3f} s "
            f"({r['scan_after_over_before']:.2f} ×) | {b['aggregate_s']:.3f} / "
            f"{a['aggregate_s']:.3f} s ({r['aggregate_after_over_before']:.2f} ×) |"
        )
    lines += [
        "",
        "Goal for the reads: within 1.1 × their time before the deletes. "
        + "; ".join(
            f"{r['layout']}: {r['deletes']} deletes took {r['deletes_total_s']:.0f} s and left "
            f"{r['deletion_vectors']} vectors over {r['deleted_rows']:,} rows"
            for r in results
        )
        + ".",
    ]
    write_report(out, "deletes", result, lines)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

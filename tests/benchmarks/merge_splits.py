"""MERGE SPLITS on a table made of many small appends: a selective query before and after.

    .venv/bin/python tests/benchmarks/merge_splits.py --appends 200 --rows-per-append 10000 \\
        --runs 5 --out target/bench-merge

Generates the benchmark suite's log rows (tests/benchmarks/datagen.py) once, to Parquet with one
directory per append, and writes them as an IndexTables table of `--appends` appends (one split
each, as an hourly job leaves them). It times a selective query (a host, a latency window and a
message term, different in each run so that no cache answers; tantivy's query cache off) `--runs`
times, runs `MERGE SPLITS` (default target 5G), and times the same queries again. Reports the merge
time, the split counts before and after, the queries' medians and their ratio, and checks that
every query gives the same rows on both sides. Writes <out>/merge-splits.json and .md, and prints
the table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession
from pyspark.sql import functions as F

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datagen
from bench_session import add_session_args, local_session, write_report

TYPEMAP_MESSAGE = "spark.indextables.indexing.typemap.message"
QUERY_CACHE = "spark.indextables.cache.queryCache.enabled"
LOGHUB = Path(__file__).resolve().parents[3] / "shared" / "data" / "loghub"


def _spark(cores: int, memory: str) -> SparkSession:
    return local_session("merge-splits", cores, memory)


def _query(run: int) -> str:
    """The run-th selective query: a different host, latency window and term each time."""
    return (
        "SELECT ts, host, latency_ms, message FROM merge_bench WHERE "
        + datagen.selective_condition(run)
    )


def _time_queries(spark: SparkSession, table: Path, runs: int) -> tuple[list[float], list[Any]]:
    df = spark.read.format("indextables").option(QUERY_CACHE, "false").load(str(table))
    df.createOrReplaceTempView("merge_bench")
    spark.sql(_query(runs + 1)).collect()  # warm-up: a query none of the timed ones repeats
    times, answers = [], []
    for run in range(runs):
        start = time.perf_counter()
        rows = spark.sql(_query(run)).collect()
        times.append(time.perf_counter() - start)
        answers.append(sorted(repr(tuple(r)) for r in rows))
    return times, answers


def _unmerged(spark: SparkSession, table: Path, appends: int) -> bool:
    """True when `table` holds exactly the appends of an earlier run, not yet merged."""
    if not (table / "_transaction_log").is_dir():
        return False
    (state,) = spark.sql(f"DESCRIBE INDEXTABLES STATE '{table}'").collect()
    return bool(state.version == appends - 1 and state.num_files == appends)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--appends", type=int, default=200)
    p.add_argument("--rows-per-append", type=int, default=10_000)
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--target", default="", help="MERGE SPLITS TARGET SIZE (default: 5G)")
    add_session_args(p, "target/bench-merge", "4g")
    args = p.parse_args()
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    spark = _spark(args.cores, args.driver_memory)

    rows = args.appends * args.rows_per_append
    source = out / f"source-{args.appends}x{args.rows_per_append}.parquet"
    if not source.exists():
        loghub = LOGHUB if LOGHUB.is_dir() else None
        df, _ = datagen.generate(spark, rows, args.appends, 11, loghub)
        df.withColumn("batch", F.spark_partition_id()).write.partitionBy("batch").parquet(
            str(source)
        )
    table = out / "table"
    write_s: float | None = None
    if _unmerged(spark, table, args.appends):
        print(f"reusing the {args.appends} appends already in {table}", flush=True)
    else:
        if table.exists():
            import shutil

            shutil.rmtree(table)
        start = time.perf_counter()
        for i in range(args.appends):
            batch = spark.read.parquet(str(source / f"batch={i}")).coalesce(1)
            batch.write.format("indextables").mode("append").option(TYPEMAP_MESSAGE, "text").save(
                str(table)
            )
        write_s = time.perf_counter() - start
    splits_before = len(list(table.rglob("*.split")))

    before_times, before_answers = _time_queries(spark, table, args.runs)
    target = f" TARGET SIZE {args.target}" if args.target else ""
    start = time.perf_counter()
    (merge,) = spark.sql(f"MERGE SPLITS '{table}'{target}").collect()
    merge_s = time.perf_counter() - start
    (state,) = spark.sql(f"DESCRIBE INDEXTABLES STATE '{table}'").collect()
    after_times, after_answers = _time_queries(spark, table, args.runs)
    if before_answers != after_answers:
        print("the queries' answers differ before and after MERGE SPLITS", file=sys.stderr)
        return 1
    if state.num_records != rows:
        print(f"the merged table holds {state.num_records} rows, not {rows}", file=sys.stderr)
        return 1

    before, after = statistics.median(before_times), statistics.median(after_times)
    result: dict[str, Any] = {
        "appends": args.appends,
        "rows_per_append": args.rows_per_append,
        "rows": rows,
        "cores": args.cores,
        "runs": args.runs,
        "target": args.target or "5G",
        "write_s": write_s,
        "splits_before": splits_before,
        "splits_after": state.num_files,
        "merge_s": merge_s,
        "merge_status": merge.metrics.status,
        "merged_files": merge.metrics.merged_files,
        "merge_groups": merge.metrics.merge_groups,
        "merged_bytes": merge.metrics.merged_size_bytes,
        "query_before_s": before,
        "query_after_s": after,
        "query_speedup": before / after,
        "query_rows": [len(a) for a in after_answers],
        "query_before_runs_s": before_times,
        "query_after_runs_s": after_times,
    }
    lines = [
        f"# MERGE SPLITS: {args.appends} appends of {args.rows_per_append:,} rows, "
        f"{args.cores} cores",
        "",
        f"Target size {result['target']}; a selective query (host, latency window, message "
        f"term; different in each of {args.runs} runs, after a warm-up; tantivy's query cache "
        "off), before and after the merge. Every query gave the same rows on both sides.",
        "",
        "| | splits | selective query (median) |",
        "|---|---|---|",
        f"| before | {splits_before} | {before:.3f} s |",
        f"| after MERGE SPLITS | {state.num_files} | {after:.3f} s |",
        "",
        f"Merge: {merge_s:.1f} s ({merge.metrics.merged_files} splits into "
        f"{merge.metrics.merge_groups}, status {merge.metrics.status}). Query: "
        f"{result['query_speedup']:.1f}x faster after the merge."
        + (f" Writing the {args.appends} appends took {write_s:.0f} s." if write_s else ""),
    ]
    write_report(out, "merge-splits", result, lines)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

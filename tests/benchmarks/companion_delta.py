"""BUILD INDEXTABLES COMPANION FOR DELTA: a first build against the writes, a sync of one commit.

    .venv/bin/python tests/benchmarks/companion_delta.py --rows 2000000 --appends 20 \\
        --commits 100 --runs 3 --warmup 1 --out target/bench-companion-delta

Part 1, the first build. Each round writes the benchmark suite's log rows (datagen.py) as a
fresh Delta table in `--appends` appended Delta writes, timed together, then builds a companion
index over it (`message` as text), timed. Goal: the build takes at most 2 x the writes.

Part 2, a sync after one commit. A Delta table of `--commits` appended commits (the same rows,
`--rows` in all) is indexed once. Each round appends one more commit of rows/commits rows and
times the sync; it counts the Parquet files the commit added (Delta's numFiles metric) and the
files the sync indexed, which must be equal, and times indexing exactly those rows alone: the
commit's files copied to a fresh folder and indexed there (BUILD ... FOR PARQUET, same modes).
Goal: the sync takes at most 1.2 x that.

Medians of `--runs` rounds after `--warmup`. Writes <out>/companion-delta.json and .md.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import datagen
import delta_oracle
from bench_session import add_session_args, local_session, write_report

LOGHUB = Path(__file__).resolve().parents[3] / "shared" / "data" / "loghub"
MODES = "INDEXING MODES ('message': 'text')"


def _bytes(path: Path, suffix: str) -> int:
    return sum(p.stat().st_size for p in path.rglob(f"*{suffix}") if "_delta_log" not in p.parts)


def _build(spark: SparkSession, fmt: str, source: Path, index: Path) -> tuple[float, Any]:
    start = time.perf_counter()
    (row,) = spark.sql(
        f"BUILD INDEXTABLES COMPANION FOR {fmt} '{source}' AT LOCATION '{index}' {MODES}"
    ).collect()
    elapsed = time.perf_counter() - start
    if row.status != "success":
        raise SystemExit(f"the build of {source} did not succeed: {row}")
    return elapsed, row


def _new_files(source: Path, before: set[Path]) -> list[Path]:
    """The data files below `source` (not Delta's checkpoints) that `before` does not hold."""
    return sorted(
        p for p in source.rglob("*.parquet") if "_delta_log" not in p.parts and p not in before
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=2_000_000)
    p.add_argument("--appends", type=int, default=20)
    p.add_argument("--commits", type=int, default=100)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    add_session_args(p, "target/bench-companion-delta")
    args = p.parse_args()
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    spark = local_session(
        "companion-delta", args.cores, args.driver_memory, extra=delta_oracle.configure
    )
    loghub = LOGHUB if LOGHUB.is_dir() else None
    per_append = args.rows // args.appends
    chunks: list[DataFrame] = []
    for i in range(args.appends):
        df, _ = datagen.generate(spark, per_append, args.cores, 100 + i, loghub)
        chunks.append(df.cache())
        chunks[-1].count()
    load_start = os.getloadavg()[0]
    shutil.rmtree(out / "rounds", ignore_errors=True)

    # Part 1: the first build against the writes.
    writes: list[float] = []
    builds: list[float] = []
    for round_ in range(args.warmup + args.runs):
        source, index = out / "rounds" / f"delta-{round_}", out / "rounds" / f"index-{round_}"
        start = time.perf_counter()
        for chunk in chunks:
            chunk.write.format("delta").mode("append").save(str(source))
        write_s = time.perf_counter() - start
        build_s, _ = _build(spark, "DELTA", source, index)
        print(f"round {round_}: write {write_s:.2f} s, build {build_s:.2f} s", file=sys.stderr)
        if round_ >= args.warmup:
            writes.append(write_s)
            builds.append(build_s)
    first_source, first_index = source, index

    # Part 2: one commit's sync on a table of many commits.
    everything = chunks[0]
    for chunk in chunks[1:]:
        everything = everything.unionByName(chunk)
    per_commit = args.rows // args.commits
    table = out / "rounds" / "many-commits"
    index = out / "rounds" / "many-commits-index"
    numbered = everything.withColumn("_n", F.monotonically_increasing_id() % args.commits).cache()
    numbered.count()
    for i in range(args.commits):
        numbered.where(F.col("_n") == i).drop("_n").coalesce(1).write.format("delta").mode(
            "append"
        ).save(str(table))
    _build(spark, "DELTA", table, index)
    delta = delta_oracle.DeltaTable(spark, str(table))
    syncs: list[float] = []
    alone: list[float] = []
    counted: list[tuple[int, int]] = []
    for round_ in range(args.warmup + args.runs):
        rows, _ = datagen.generate(spark, per_commit, 1, 1000 + round_, loghub)
        before = {p for p in table.rglob("*.parquet")}
        rows.write.format("delta").mode("append").save(str(table))
        added = _new_files(table, before)
        metrics = delta.last_operation()[1]
        sync_s, row = _build(spark, "DELTA", table, index)
        lone = out / "rounds" / f"commit-{round_}"
        lone.mkdir(parents=True)
        for f in added:
            shutil.copy(f, lone / f.name)
        alone_s, _ = _build(spark, "PARQUET", lone, out / "rounds" / f"commit-{round_}-index")
        print(
            f"sync round {round_}: {len(added)} new files ({metrics.get('numFiles')} by Delta), "
            f"{row.parquet_files_indexed} indexed; sync {sync_s:.2f} s, alone {alone_s:.2f} s",
            file=sys.stderr,
        )
        if row.parquet_files_indexed != len(added) or int(metrics["numFiles"]) != len(added):
            raise SystemExit(f"the sync indexed {row.parquet_files_indexed} of {len(added)} files")
        if round_ >= args.warmup:
            syncs.append(sync_s)
            alone.append(alone_s)
            counted.append((len(added), row.parquet_files_indexed))

    write_s, build_s = statistics.median(writes), statistics.median(builds)
    sync_s, alone_s = statistics.median(syncs), statistics.median(alone)
    result: dict[str, Any] = {
        "rows": per_append * args.appends,
        "appends": args.appends,
        "commits": args.commits,
        "rows_per_commit": per_commit,
        "cores": args.cores,
        "runs": args.runs,
        "warmup": args.warmup,
        "load_average_start": load_start,
        "load_average_end": os.getloadavg()[0],
        "write_s": writes,
        "build_s": builds,
        "build_over_write": build_s / write_s,
        "parquet_bytes": _bytes(first_source, ".parquet"),
        "split_bytes": _bytes(first_index, ".split"),
        "sync_s": syncs,
        "alone_s": alone,
        "sync_over_alone": sync_s / alone_s,
        "files_added_and_indexed": counted,
    }
    r = result
    lines = [
        f"# BUILD INDEXTABLES COMPANION FOR DELTA: {r['rows']:,} rows, {args.cores} cores",
        "",
        f"Medians of {args.runs} rounds after {args.warmup} warm-up; load average "
        f"{r['load_average_start']:.2f} at the start, {r['load_average_end']:.2f} at the end.",
        "",
        "| | time | goal |",
        "|---|---|---|",
        f"| Delta's writes: {args.appends} appends | {write_s:.2f} s | |",
        f"| first BUILD ... FOR DELTA over them | {build_s:.2f} s: "
        f"**{r['build_over_write']:.2f} x** the writes | <= 2 x |",
        f"| sync after one commit of {per_commit:,} rows on a {args.commits}-commit table | "
        f"{sync_s:.2f} s: **{r['sync_over_alone']:.2f} x** | <= 1.2 x |",
        f"| indexing that commit's files alone (FOR PARQUET) | {alone_s:.2f} s | |",
        "",
        f"Files each measured commit added, and the sync indexed: {counted}. Splits "
        f"{r['split_bytes'] / 1e6:.1f} MB beside {r['parquet_bytes'] / 1e6:.1f} MB of Parquet.",
    ]
    write_report(out, "companion-delta", result, lines)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

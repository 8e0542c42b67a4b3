"""BUILD INDEXTABLES COMPANION FOR DELTA | ICEBERG: a first build against the writes, a sync of
one commit.

    .venv/bin/python tests/benchmarks/companion_source.py --source delta --rows 2000000 \\
        --appends 20 --commits 100 --runs 3 --warmup 1 --out target/bench-companion-delta

Part 1, the first build. Each round writes the benchmark suite's log rows (datagen.py) as a
fresh table of the source format (`--source`: a Delta table by path, or an Iceberg table of a
Hadoop catalog) in `--appends` appended writes, timed together, then builds a companion index
over it (`message` as text), timed. Goal: the build takes at most 2 x the writes.

Part 2, a sync after one commit. A table of `--commits` appended commits (the same rows, `--rows`
in all) is indexed once. Each round appends one more commit of rows/commits rows and times the
sync; it counts the Parquet files the commit added (Delta's numFiles metric, Iceberg's
added-data-files) and the files the sync indexed, which must be equal, and times indexing exactly
those rows alone: the commit's files copied to a fresh folder and indexed there (BUILD ... FOR
PARQUET, same modes). Goal: the sync takes at most 1.2 x that.

Medians of `--runs` rounds after `--warmup`. Writes <out>/companion-<source>.json and .md.
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


# The directories of a table's own log: never its data files.
LOG_DIRS = ("_delta_log", "metadata")
CATALOG = "bench"


def _bytes(path: Path, suffix: str) -> int:
    return sum(
        p.stat().st_size
        for p in path.rglob(f"*{suffix}")
        if not any(d in p.parts for d in LOG_DIRS)
    )


class Source:
    """A table of the source format at `path` (an Iceberg table lives there, in the Hadoop
    catalog `bench` whose warehouse is its parent's parent)."""

    def __init__(self, spark: SparkSession, fmt: str, path: Path) -> None:
        self.spark, self.fmt, self.path = spark, fmt, path
        self.name = f"{CATALOG}.db.{path.name.replace('-', '_')}"
        if fmt == "iceberg":
            self.path = path.parent / path.name.replace("-", "_")

    def append(self, rows: DataFrame) -> None:
        if self.fmt == "delta":
            rows.write.format("delta").mode("append").save(str(self.path))
        elif self.spark.catalog.tableExists(self.name):
            rows.writeTo(self.name).append()
        else:
            rows.writeTo(self.name).tableProperty("format-version", "2").create()

    def build(self, index: Path) -> tuple[float, Any]:
        if self.fmt == "delta":
            return _build(self.spark, f"FOR DELTA '{self.path}'", index)
        return _build(
            self.spark, f"FOR ICEBERG '{self.name[len(CATALOG) + 1 :]}' CATALOG '{CATALOG}'", index
        )

    def files_added(self) -> int:
        """The data files the latest commit added, as the format's own log counts them."""
        if self.fmt == "delta":
            metrics = delta_oracle.DeltaTable(self.spark, str(self.path)).last_operation()[1]
            return int(metrics["numFiles"])
        (last,) = self.spark.sql(
            f"SELECT summary FROM {self.name}.snapshots ORDER BY committed_at DESC LIMIT 1"
        ).collect()
        return int(last.summary["added-data-files"])


def _build(spark: SparkSession, source: str, index: Path) -> tuple[float, Any]:
    start = time.perf_counter()
    (row,) = spark.sql(
        f"BUILD INDEXTABLES COMPANION {source} AT LOCATION '{index}' {MODES}"
    ).collect()
    elapsed = time.perf_counter() - start
    if row.status != "success":
        raise SystemExit(f"the build of {source} did not succeed: {row}")
    return elapsed, row


def _new_files(source: Path, before: set[Path]) -> list[Path]:
    """The data files below `source` (not its log's) that `before` does not hold."""
    return sorted(
        p
        for p in source.rglob("*.parquet")
        if not any(d in p.parts for d in LOG_DIRS) and p not in before
    )


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--source", choices=("delta", "iceberg"), default="delta")
    p.add_argument("--rows", type=int, default=2_000_000)
    p.add_argument("--appends", type=int, default=20)
    p.add_argument("--commits", type=int, default=100)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    add_session_args(p, "target/bench-companion-source")
    args = p.parse_args()
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    fmt: str = args.source
    shutil.rmtree(out / "rounds", ignore_errors=True)
    iceberg = {
        f"spark.sql.catalog.{CATALOG}": "org.apache.iceberg.spark.SparkCatalog",
        f"spark.sql.catalog.{CATALOG}.type": "hadoop",
        f"spark.sql.catalog.{CATALOG}.warehouse": str(out / "rounds"),
    }
    spark = local_session(
        f"companion-{fmt}", args.cores, args.driver_memory, iceberg, extra=delta_oracle.configure
    )
    spark.sql(f"CREATE NAMESPACE IF NOT EXISTS {CATALOG}.db")
    loghub = LOGHUB if LOGHUB.is_dir() else None
    per_append = args.rows // args.appends
    chunks: list[DataFrame] = []
    for i in range(args.appends):
        df, _ = datagen.generate(spark, per_append, args.cores, 100 + i, loghub)
        chunks.append(df.cache())
        chunks[-1].count()
    load_start = os.getloadavg()[0]

    # Part 1: the first build against the writes.
    writes: list[float] = []
    builds: list[float] = []
    for round_ in range(args.warmup + args.runs):
        source = Source(spark, fmt, out / "rounds" / "db" / f"table-{round_}")
        index = out / "rounds" / f"index-{round_}"
        start = time.perf_counter()
        for chunk in chunks:
            source.append(chunk)
        write_s = time.perf_counter() - start
        build_s, _ = source.build(index)
        print(f"round {round_}: write {write_s:.2f} s, build {build_s:.2f} s", file=sys.stderr)
        if round_ >= args.warmup:
            writes.append(write_s)
            builds.append(build_s)
    first_source, first_index = source.path, index

    # Part 2: one commit's sync on a table of many commits.
    everything = chunks[0]
    for chunk in chunks[1:]:
        everything = everything.unionByName(chunk)
    per_commit = args.rows // args.commits
    table = Source(spark, fmt, out / "rounds" / "db" / "many-commits")
    index = out / "rounds" / "many-commits-index"
    numbered = everything.withColumn("_n", F.monotonically_increasing_id() % args.commits).cache()
    numbered.count()
    for i in range(args.commits):
        table.append(numbered.where(F.col("_n") == i).drop("_n").coalesce(1))
    table.build(index)
    syncs: list[float] = []
    alone: list[float] = []
    counted: list[tuple[int, int]] = []
    for round_ in range(args.warmup + args.runs):
        rows, _ = datagen.generate(spark, per_commit, 1, 1000 + round_, loghub)
        before = {p for p in table.path.rglob("*.parquet")}
        table.append(rows)
        added = _new_files(table.path, before)
        by_log = table.files_added()
        sync_s, row = table.build(index)
        lone = out / "rounds" / f"commit-{round_}"
        lone.mkdir(parents=True)
        for f in added:
            shutil.copy(f, lone / f.name)
        alone_s, _ = _build(
            spark, f"FOR PARQUET '{lone}'", out / "rounds" / f"commit-{round_}-index"
        )
        print(
            f"sync round {round_}: {len(added)} new files ({by_log} by {fmt}), "
            f"{row.parquet_files_indexed} indexed; sync {sync_s:.2f} s, alone {alone_s:.2f} s",
            file=sys.stderr,
        )
        if row.parquet_files_indexed != len(added) or by_log != len(added):
            raise SystemExit(f"the sync indexed {row.parquet_files_indexed} of {len(added)} files")
        if round_ >= args.warmup:
            syncs.append(sync_s)
            alone.append(alone_s)
            counted.append((len(added), row.parquet_files_indexed))

    write_s, build_s = statistics.median(writes), statistics.median(builds)
    sync_s, alone_s = statistics.median(syncs), statistics.median(alone)
    result: dict[str, Any] = {
        "source": fmt,
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
        f"# BUILD INDEXTABLES COMPANION FOR {fmt.upper()}: {r['rows']:,} rows, {args.cores} cores",
        "",
        f"Medians of {args.runs} rounds after {args.warmup} warm-up; load average "
        f"{r['load_average_start']:.2f} at the start, {r['load_average_end']:.2f} at the end.",
        "",
        "| | time | goal |",
        "|---|---|---|",
        f"| {fmt}'s writes: {args.appends} appends | {write_s:.2f} s | |",
        f"| first BUILD ... FOR {fmt.upper()} over them | {build_s:.2f} s: "
        f"**{r['build_over_write']:.2f} x** the writes | <= 2 x |",
        f"| sync after one commit of {per_commit:,} rows on a {args.commits}-commit table | "
        f"{sync_s:.2f} s: **{r['sync_over_alone']:.2f} x** | <= 1.2 x |",
        f"| indexing that commit's files alone (FOR PARQUET) | {alone_s:.2f} s | |",
        "",
        f"Files each measured commit added, and the sync indexed: {counted}. Splits "
        f"{r['split_bytes'] / 1e6:.1f} MB beside {r['parquet_bytes'] / 1e6:.1f} MB of Parquet.",
    ]
    write_report(out, f"companion-{fmt}", result, lines)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

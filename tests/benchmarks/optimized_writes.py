"""Optimized writes against plain writes, on the same rows from many small input partitions.

    .venv/bin/python tests/benchmarks/optimized_writes.py --rows 2000000 --partitions 400 \\
        --target 32M --runs 10 --warmup 3 --out target/bench-optimized

Writes the benchmark suite's log rows (tests/benchmarks/datagen.py) once to Parquet in
`--partitions` files, then writes them from there as IndexTables twice: plainly (one split per
input partition) and with `spark.indextables.write.optimizeWrite.enabled` (hash mode, the given
target split size). For each table it reports the write time, the split count, the smallest,
median and largest split, and the median time of a selective search and of `COUNT(*)`, each
run `--runs` times after `--warmup` rounds with tantivy's query cache off, side by side in each
round (which goes first alternates). The selective search differs in every round (the rare
term on another host each round), so no cache of any layer can answer it; both tables must give
the same rows each round.
Writes <out>/optimized-writes.json and .md, and prints the table.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datagen
from bench_session import add_session_args, local_session, write_report

TYPEMAP_MESSAGE = "spark.indextables.indexing.typemap.message"
OPTIMIZE = "spark.indextables.write.optimizeWrite."
QUERY_CACHE = "spark.indextables.cache.queryCache.enabled"
LOGHUB = Path(__file__).resolve().parents[3] / "shared" / "data" / "loghub"


def _spark(cores: int, memory: str) -> SparkSession:
    return local_session(
        "optimized-writes",
        cores,
        memory,
        {
            # One read task per Parquet file: the input keeps its many small partitions.
            "spark.sql.files.maxPartitionBytes": str(1 << 34),
            "spark.sql.files.openCostInBytes": str(1 << 34),
        },
    )


def _sizes(path: Path) -> list[int]:
    return sorted(p.stat().st_size for p in path.rglob("*.split"))


def _median(times: list[float]) -> float:
    return float(statistics.median(times))


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=2_000_000)
    p.add_argument("--partitions", type=int, default=400)
    p.add_argument("--target", default="32M", help="optimizeWrite.targetSplitSize")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    add_session_args(p, "target/bench-optimized")
    args = p.parse_args()
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    spark = _spark(args.cores, args.driver_memory)

    source = out / f"source-{args.rows}-{args.partitions}.parquet"
    if not source.exists():
        loghub = LOGHUB if LOGHUB.is_dir() else None
        df, _ = datagen.generate(spark, args.rows, args.partitions, 7, loghub)
        df.write.parquet(str(source))
    data = spark.read.parquet(str(source))
    assert data.rdd.getNumPartitions() == args.partitions, data.rdd.getNumPartitions()

    variants: dict[str, dict[str, str]] = {
        "plain": {TYPEMAP_MESSAGE: "text"},
        "optimized": {
            TYPEMAP_MESSAGE: "text",
            OPTIMIZE + "enabled": "true",
            OPTIMIZE + "targetSplitSize": args.target,
        },
    }
    result: dict[str, Any] = {
        "rows": args.rows,
        "input_partitions": args.partitions,
        "target": args.target,
        "cores": args.cores,
        "runs": args.runs,
        "warmup": args.warmup,
    }
    for name, options in variants.items():
        table = out / f"table-{name}"
        # A new table each run: an overwrite would leave the old splits on disk (counted below).
        shutil.rmtree(table, ignore_errors=True)
        start = time.perf_counter()
        data.write.format("indextables").mode("overwrite").options(**options).save(str(table))
        seconds = time.perf_counter() - start
        sizes = _sizes(table)
        result[name] = {
            "write_s": seconds,
            "splits": len(sizes),
            "min_bytes": sizes[0],
            "median_bytes": int(statistics.median(sizes)),
            "max_bytes": sizes[-1],
            "total_bytes": sum(sizes),
        }

    def selective(name: str, round_: int) -> int:
        df = spark.read.format("indextables").option(QUERY_CACHE, "false")
        df.load(str(out / f"table-{name}")).createOrReplaceTempView(f"t_{name}")
        host = datagen.HOSTS[round_ % len(datagen.HOSTS)]
        q = f"SELECT * FROM t_{name} WHERE message indexquery '{datagen.RARE_TERM}' AND host = :h"
        return len(spark.sql(q, args={"h": host}).collect())

    def count(name: str, round_: int) -> int:
        df = spark.read.format("indextables").option(QUERY_CACHE, "false")
        return int(df.load(str(out / f"table-{name}")).count())

    workloads = {"selective_search": selective, "count_star": count}
    times: dict[str, dict[str, list[float]]] = {w: {n: [] for n in variants} for w in workloads}
    answers: dict[str, list[int]] = {w: [] for w in workloads}
    for round_ in range(args.warmup + args.runs):
        for w, run in workloads.items():
            got = set()
            # The order alternates, so that neither table always follows the other's query.
            for name in list(variants)[:: 1 if round_ % 2 == 0 else -1]:
                start = time.perf_counter()
                got.add(run(name, round_))
                if round_ >= args.warmup:
                    times[w][name].append(time.perf_counter() - start)
            if len(got) != 1:
                print(f"the tables disagree on {w} in round {round_}: {got}", file=sys.stderr)
                return 1
            answers[w] += got
    for w in workloads:
        for name in variants:
            result[name][w + "_s"] = _median(times[w][name])
        result[w + "_speedup"] = result["plain"][w + "_s"] / result["optimized"][w + "_s"]
        result[w + "_answer"] = int(statistics.median(answers[w]))

    target = indextables_size(args.target)
    opt = result["optimized"]
    result["within_target"] = all(
        0.5 * target <= s <= 1.5 * target for s in _sizes(out / "table-optimized")
    )
    lines = [
        f"# Optimized writes: {args.rows:,} rows from {args.partitions} input partitions, "
        f"{args.cores} cores",
        "",
        f"Target split size {args.target}; medians of {args.runs} runs after {args.warmup} "
        "warm-up rounds, tantivy's query cache off, the selective search different in each "
        "round; both tables timed side by side in each round.",
        "",
        "| | write | splits | min / median / max split | selective search | COUNT(*) |",
        "|---|---|---|---|---|---|",
    ]
    for name in variants:
        r = result[name]
        lines.append(
            f"| {name} | {r['write_s']:.1f} s | {r['splits']} | "
            f"{_mb(r['min_bytes'])} / {_mb(r['median_bytes'])} / {_mb(r['max_bytes'])} | "
            f"{r['selective_search_s']:.3f} s | {r['count_star_s']:.3f} s |"
        )
    lines += [
        "",
        f"Selective search (median {result['selective_search_answer']} rows): "
        f"{result['selective_search_speedup']:.1f}x faster on the optimized table; "
        f"COUNT(*): {result['count_star_speedup']:.1f}x. Write time: "
        f"{opt['write_s'] / result['plain']['write_s']:.2f}x the plain write's. "
        f"Every optimized split within 0.5-1.5x the target: {result['within_target']}.",
    ]
    write_report(out, "optimized-writes", result, lines)
    spark.stop()
    return 0


def indextables_size(text: str) -> int:
    units = {"K": 10, "M": 20, "G": 30, "T": 40}
    t = text.strip().upper()
    return int(t[:-1]) << units[t[-1]] if t[-1] in units else int(t)


def _mb(n: int) -> str:
    return f"{n / (1 << 20):.1f} MB"


if __name__ == "__main__":
    sys.exit(main())

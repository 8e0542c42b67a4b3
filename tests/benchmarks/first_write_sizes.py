"""The split sizes of a table's first optimized write, against the target, on both layouts.

    .venv/bin/python tests/benchmarks/first_write_sizes.py --rows 600000 --partitions 200 \\
        --targets 8M,32M --layouts splits,companion --out target/bench-first-write

Writes the benchmark suite's log rows (tests/benchmarks/datagen.py, `message` typed as text)
once to Parquet in `--partitions` files, then, for each layout and target, writes them from
there into a new table with `spark.indextables.write.optimizeWrite.enabled` (hash mode, Spark's
200 shuffle partitions for AQE to coalesce). A first write has no history, so its sizes come
from the sampling estimate. For each write it reports the split count, each split's size as a
multiple of the target (on the companion layout a split counts with its Parquet file, as the
estimate does), the advisory shuffle size the write asked for, and the on-disk bytes per
shuffle byte it measured (the ratio `WriteSizeEstimator.splitBytesPerShuffleByte` assumes).
Writes <out>/first-write-sizes.json and .md, and prints the table.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datagen
from bench_session import add_session_args, local_session, write_report

LOGHUB = Path(__file__).resolve().parents[3] / "shared" / "data" / "loghub"
OPTIMIZE = "spark.indextables.write.optimizeWrite."
UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def _bytes(size: str) -> int:
    return int(size[:-1]) * UNITS[size[-1].upper()] if size[-1].isalpha() else int(size)


def split_sizes(table: Path) -> list[int]:
    """Each split's bytes, with its Parquet file's on the companion layout."""
    sizes = []
    for split in table.rglob("*.split"):
        parquet = split.with_suffix(".parquet")
        sizes.append(split.stat().st_size + (parquet.stat().st_size if parquet.exists() else 0))
    return sorted(sizes)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=600_000)
    p.add_argument("--partitions", type=int, default=200)
    p.add_argument("--targets", default="8M,32M")
    p.add_argument("--layouts", default="splits,companion")
    add_session_args(p, "target/bench-first-write")
    args = p.parse_args()
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    spark = local_session(
        "first-write-sizes",
        args.cores,
        args.driver_memory,
        {
            "spark.sql.shuffle.partitions": "200",
            "spark.sql.files.maxPartitionBytes": str(1 << 34),
            "spark.sql.files.openCostInBytes": str(1 << 34),
        },
    )
    source = out / f"source-{args.rows}-{args.partitions}.parquet"
    if not source.exists():
        loghub = LOGHUB if LOGHUB.is_dir() else None
        df, _ = datagen.generate(spark, args.rows, args.partitions, 7, loghub)
        df.write.parquet(str(source))
    data = spark.read.parquet(str(source))

    results: list[dict[str, Any]] = []
    for layout in args.layouts.split(","):
        for target in args.targets.split(","):
            table = out / f"table-{layout}-{target}"
            shutil.rmtree(table, ignore_errors=True)
            start = time.perf_counter()
            (
                data.write.format("indextables")
                .option("spark.indextables.indexing.typemap.message", "text")
                .option("spark.indextables.write.layout", layout)
                .option(OPTIMIZE + "enabled", "true")
                .option(OPTIMIZE + "targetSplitSize", target)
                .save(str(table))
            )
            seconds = time.perf_counter() - start
            sizes = split_sizes(table)
            record = spark.sql(f"DESCRIBE INDEXTABLES HISTORY '{table}'").collect()[0]
            params, metrics = dict(record.operation_parameters), dict(record.operation_metrics)
            shuffle = int(metrics.get("shuffleBytesRead", "0"))
            row = {
                "layout": layout,
                "target": target,
                "write_s": round(seconds, 1),
                "splits": len(sizes),
                "sizes_mb": [round(s / (1 << 20), 1) for s in sizes],
                "x_target": [round(s / _bytes(target), 2) for s in sizes],
                "advisory_bytes": int(params["advisoryPartitionSize"]),
                "size_estimate": params["sizeEstimate"],
                "bytes_per_shuffle_byte": round(sum(sizes) / shuffle, 3) if shuffle else None,
            }
            results.append(row)
            print(json.dumps(row), flush=True)

    lines = [
        "# First optimized writes: split sizes against the target",
        "",
        f"{args.rows:,} log rows from {args.partitions} input partitions, {args.cores} cores, "
        "a new table per write (sampling estimate); a companion split counts with its Parquet "
        "file. Every split but the smallest should be 0.5-1.5 × the target.",
        "",
        "| Layout | Target | Splits | × target, each | Advisory shuffle size | "
        "Bytes per shuffle byte | Write |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['layout']} | {r['target']} | {r['splits']} | "
            f"{', '.join(str(x) for x in r['x_target'])} | {r['advisory_bytes']:,} | "
            f"{r['bytes_per_shuffle_byte']} | {r['write_s']} s |"
        )
    write_report(out, "first-write-sizes", results, lines)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

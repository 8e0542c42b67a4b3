"""What a companion split costs to build and to keep, by tantivy4java fast field mode.

    .venv/bin/python tests/benchmarks/companion_indexing.py --rows 1000000 \\
        --out target/bench-companion-indexing

Writes the benchmark suite's log rows (tests/benchmarks/datagen.py) as one Parquet file, as a
write task of the companion layout does (microsecond timestamps), then indexes that file with
`QuickwitSplit.createFromParquet` once per variant, the way the product configures it (`message`
tokenized, the other strings raw terms, no string fingerprints): each fast field mode, and each
with the unique numeric columns (`ts`, `latency_ms`) left out of the index, as
`spark.indextables.indexing.storeonlyfields` does. For each it reports the CPU seconds of the
JVM (createFromParquet runs on the calling thread and its own native threads, so CPU time is
what a loaded machine does not distort, unlike wall time) and the split's bytes against the
Parquet file's. Medians of `--runs`. Writes <out>/companion-indexing.json and .md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import datagen
from bench_session import local_session, write_report

LOGHUB = Path(__file__).resolve().parents[3] / "shared" / "data" / "loghub"
MODES = ("DISABLED", "HYBRID", "PARQUET_ONLY")
UNIQUE_NUMBERS = ("ts", "latency_ms")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rows", type=int, default=1_000_000)
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--driver-memory", default="6g")
    p.add_argument("--out", type=Path, default=Path("target/bench-companion-indexing"))
    args = p.parse_args()
    out: Path = args.out.resolve()
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    spark = local_session(
        "companion-indexing",
        2,
        args.driver_memory,
        {"spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS"},
    )
    jvm = spark.sparkContext._jvm
    gateway = spark.sparkContext._gateway
    assert jvm is not None and gateway is not None
    pid = int(jvm.java.lang.ProcessHandle.current().pid())

    def cpu_seconds() -> float:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def strings(values: tuple[str, ...]) -> Any:
        array = gateway.new_array(jvm.String, len(values))
        for i, v in enumerate(values):
            array[i] = v
        return array

    df, _ = datagen.generate(spark, args.rows, 2, 7, LOGHUB if LOGHUB.is_dir() else None)
    df.coalesce(1).write.parquet(str(out / "source"))
    (parquet,) = (out / "source").glob("*.parquet")
    split_api = jvm.io.indextables.tantivy4java.split
    tokenizers = jvm.java.util.HashMap()
    for f in df.schema.fields:
        if f.dataType.simpleString() == "string":
            tokenizers.put(f.name, "default" if f.name == "message" else "raw")

    results: list[dict[str, Any]] = []
    for mode in MODES:
        for skipped in ((), UNIQUE_NUMBERS):
            config = (
                split_api.ParquetCompanionConfig(str(parquet.parent))
                .withFastFieldMode(getattr(split_api.ParquetCompanionConfig.FastFieldMode, mode))
                .withTokenizerOverrides(tokenizers)
                .withStringFingerprints(strings(()))
            )
            if skipped:
                config = config.withSkipFields(strings(skipped))
            cpus, walls, size = [], [], 0
            for run in range(args.runs):
                split = out / f"{mode}-{len(skipped)}-{run}.split"
                inputs = jvm.java.util.ArrayList()
                inputs.add(str(parquet))
                cpu0, wall0 = cpu_seconds(), time.perf_counter()
                md = split_api.merge.QuickwitSplit.createFromParquet(inputs, str(split), config)
                walls.append(time.perf_counter() - wall0)
                cpus.append(cpu_seconds() - cpu0)
                if md.getNumDocs() != args.rows:
                    print(f"{mode}: {md.getNumDocs()} rows of {args.rows}", file=sys.stderr)
                    return 1
                size = split.stat().st_size
                split.unlink()
            row = {
                "mode": mode,
                "skipped": list(skipped),
                "cpu_s": statistics.median(cpus),
                "wall_s": statistics.median(walls),
                "split_bytes": size,
                "split_per_parquet": size / parquet.stat().st_size,
            }
            results.append(row)
            print(json.dumps(row), file=sys.stderr)

    result = {
        "rows": args.rows,
        "parquet_bytes": parquet.stat().st_size,
        "load_average": os.getloadavg(),
        "variants": results,
    }
    lines = [
        f"# createFromParquet on one Parquet file of {args.rows:,} rows "
        f"({parquet.stat().st_size / 1e6:.1f} MB), medians of {args.runs}",
        "",
        "| fast field mode | left out of the index | CPU s | wall s | split MB | split ÷ Parquet |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['mode']} | {', '.join(r['skipped']) or '-'} | {r['cpu_s']:.1f} | "
            f"{r['wall_s']:.1f} | {r['split_bytes'] / 1e6:.1f} | {r['split_per_parquet']:.2f} |"
        )
    write_report(out, "companion-indexing", result, lines)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

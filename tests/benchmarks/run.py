"""Runs the IndexTables benchmark suite and writes results.json and results.md.

    .venv/bin/python tests/benchmarks/run.py --rows 2000000 --runs 5 --out target/bench

See tests/benchmarks/README.md for what is measured. Exits 1 if IndexTables and Parquet ever
disagree on a query's answer.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from suite import Config, run_suite


def main() -> int:
    d = Config()
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--rows", type=int, default=d.rows, help="rows of the log dataset (default 2,000,000)"
    )
    p.add_argument("--runs", type=int, default=d.runs, help="timed runs per workload (default 5)")
    p.add_argument(
        "--warmup", type=int, default=d.warmup, help="warm-up runs per workload (default 1)"
    )
    p.add_argument(
        "--out", type=Path, default=d.out, help="output directory (default target/bench)"
    )
    p.add_argument(
        "--cores", type=int, default=d.cores, help="Spark local[cores] and harness threads"
    )
    p.add_argument("--driver-memory", default=d.driver_memory)
    p.add_argument(
        "--append-rows",
        type=int,
        default=d.append_rows,
        help="rows per append of the many-splits layout (default 100,000)",
    )
    p.add_argument("--seed", type=int, default=d.seed)
    p.add_argument(
        "--loghub",
        type=Path,
        default=d.loghub_dir,
        help="loghub folder (default ../shared/data/loghub; built-in templates if absent)",
    )
    p.add_argument(
        "--harness",
        choices=("auto", "require", "skip"),
        default=d.harness,
        help="raw tantivy4java ceilings: auto = run if compiled (build/sbt spark/Test/compile)",
    )
    p.add_argument("--keep-data", action="store_true", help="keep <out>/data (tables, JSON rows)")
    p.add_argument(
        "--jfr", action="store_true", help="record JFR profiles of the driver and the harness"
    )
    a = p.parse_args()
    cfg = Config(
        rows=a.rows,
        runs=a.runs,
        warmup=a.warmup,
        out=a.out,
        seed=a.seed,
        cores=a.cores,
        driver_memory=a.driver_memory,
        loghub_dir=a.loghub,
        harness=a.harness,
        keep_data=a.keep_data,
        jfr=a.jfr,
        append_rows=a.append_rows,
    )
    result = run_suite(cfg)
    print((Path(cfg.out) / "results.md").read_text())
    return 0 if result["verified"] else 1


if __name__ == "__main__":
    sys.exit(main())

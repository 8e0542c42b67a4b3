"""Transaction log at scale: IndexTables against Delta Lake 3.3, side by side in one JVM.

    .venv/bin/python tests/benchmarks/log_scale.py --out target/bench-log

Times four operations on an IndexTables log and on a Delta log holding the same files: a
snapshot load of 100,000 live files, an incremental commit of 100 files onto it, a compaction
(full checkpoint) of 70,000 files, and the files of one partition of a 1,000,000-entry table.
The harness is jvm/bench (LogScaleBench), run through build/sbt; Delta is a dependency of that
benchmark project only, never of the product JAR. Writes <out>/log-scale.json and
<out>/log-scale.md, and prints the table.

The benchmark JVM has build.sbt's fixed 10 GiB heap; `--heap 1g` gives it a fixed heap of that
size instead (for a smoke run at a tiny size: tests/benchmarks/test_log_scale_smoke.py).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
_HEAP_SIZE = re.compile(r"[1-9][0-9]*[kKmMgG]?")


def heap_size(text: str) -> str:
    """A JVM heap size as -Xmx takes it: 1g, 512m, ..."""
    if not _HEAP_SIZE.fullmatch(text):
        raise argparse.ArgumentTypeError(f"not a JVM heap size such as 1g or 512m: {text!r}")
    return text


def command(args: argparse.Namespace) -> list[str]:
    flags = [
        f"--live {args.live}",
        f"--commit {args.commit}",
        f"--compact {args.compact}",
        f"--prune {args.prune}",
        f"--partitions {args.partitions}",
        f"--runs {args.runs}",
        f"--out {Path(args.out).resolve()}",
    ]
    if args.no_delta:
        flags.append("--no-delta")
    return [str(REPO / "build" / "sbt"), "bench/run " + " ".join(flags)]


def jvm_options(args: argparse.Namespace) -> str:
    """BENCH_JVM_OPTS for the benchmark JVM: any from the environment, then ours. build.sbt appends
    them after its fixed -Xms10g -Xmx10g, and on HotSpot the last -Xms/-Xmx wins."""
    opts = os.environ.get("BENCH_JVM_OPTS", "").split()
    if args.heap:
        opts += [f"-Xms{args.heap}", f"-Xmx{args.heap}"]
    if args.jfr:
        jfr = (args.out / "log-scale.jfr").resolve()
        opts.append(f"-XX:StartFlightRecording=filename={jfr},settings=profile")
    return " ".join(opts)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--live", type=int, default=100_000, help="files of the snapshot-load table")
    p.add_argument("--commit", type=int, default=100, help="files per incremental commit")
    p.add_argument("--compact", type=int, default=70_000, help="files of the compaction table")
    p.add_argument("--prune", type=int, default=1_000_000, help="entries of the pruning table")
    p.add_argument("--partitions", type=int, default=100, help="date partitions of each table")
    p.add_argument("--runs", type=int, default=5, help="timed runs after one warm-up")
    p.add_argument("--out", type=Path, default=REPO / "target" / "bench-log")
    p.add_argument("--no-delta", action="store_true", help="time IndexTables only")
    p.add_argument("--jfr", action="store_true", help="record <out>/log-scale.jfr")
    p.add_argument(
        "--heap",
        type=heap_size,
        help="fixed heap of the benchmark JVM, e.g. 1g (default: build.sbt's 10g)",
    )
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, BENCH_JVM_OPTS=jvm_options(args))
    log = args.out / "log-scale.log"
    with open(log, "w") as out:
        rc = subprocess.run(
            command(args),
            cwd=REPO,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        ).returncode
    if rc != 0:
        sys.stderr.write(f"log_scale: the harness failed (exit {rc}); see {log}\n")
        sys.stderr.write("".join(log.read_text().splitlines(keepends=True)[-40:]))
        return rc
    print((args.out / "log-scale.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The local SparkSession each stand-alone benchmark script runs in, configured as users do
(`indextables.configure_spark`), with the settings every benchmark shares."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

import indextables


def local_session(
    app: str,
    cores: int,
    memory: str,
    conf: dict[str, str] | None = None,
    extra: Callable[[SparkSession.Builder], SparkSession.Builder] | None = None,
) -> SparkSession:
    """A local session of `cores` cores and `memory` of driver heap, no UI or progress bars,
    UTC, plus `conf`; `extra` may add to the builder once the plugin has configured it."""
    builder = (
        SparkSession.builder.master(f"local[{cores}]")
        .appName(f"indextables-bench-{app}")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.memory", memory)
        .config("spark.sql.session.timeZone", "UTC")
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    builder = indextables.configure_spark(builder)
    if extra is not None:
        builder = extra(builder)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    return spark


def add_session_args(p: argparse.ArgumentParser, out: str, memory: str = "6g") -> None:
    """The options every stand-alone benchmark takes: `--cores` (Spark's local[cores]),
    `--driver-memory` and `--out` (the results directory, default `out`)."""
    p.add_argument("--cores", type=int, default=2)
    p.add_argument("--driver-memory", default=memory)
    p.add_argument("--out", type=Path, default=Path(out))


def write_report(out: Path, stem: str, result: Any, lines: list[str]) -> None:
    """Writes a benchmark's `result` to `<out>/<stem>.json` and its Markdown `lines` to
    `<out>/<stem>.md`, and prints the Markdown."""
    (out / f"{stem}.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / f"{stem}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))

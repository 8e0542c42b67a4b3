"""The transaction-log scale benchmark (tests/benchmarks/log_scale.py) at a tiny size, with
Delta, so that the harness cannot rot. Figures at this size mean nothing; the harness checks
that both logs list the files they should, and this test that every figure was reported. The
benchmark JVM gets a 1 GiB heap here, not the 10 GiB of a real run."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import log_scale

# A tiny size, and a small heap for the benchmark JVM.
SMOKE_ARGS = (
    "--live", "300", "--commit", "10", "--compact", "200", "--prune", "500",
    "--partitions", "5", "--runs", "1", "--heap", "1g",
)  # fmt: skip


def test_log_scale_smoke(tmp_path: Path) -> None:
    out = tmp_path / "bench-log"
    rc = log_scale.main([*SMOKE_ARGS, "--out", str(out)])
    assert rc == 0, (out / "log-scale.log").read_text()[-4000:]
    result = json.loads((out / "log-scale.json").read_text())
    got = {(r["operation"], r["system"]) for r in result["results"]}
    ops = ["snapshot load", "incremental commit", "compaction", "one-partition pruning"]
    assert got == {(op, system) for op in ops for system in ("IndexTables", "Delta")}
    assert all(r["median_ms"] > 0 for r in result["results"])
    table = (out / "log-scale.md").read_text()
    assert all(op in table for op in ops)


def test_heap_flag_comes_after_the_fixed_10g_heap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """build.sbt puts BENCH_JVM_OPTS after its -Xms10g -Xmx10g: --heap must end up last there."""
    monkeypatch.setenv("BENCH_JVM_OPTS", "-Xmx10g -Dfrom.env=1")
    args = log_scale.parse_args(["--heap", "1g", "--out", str(tmp_path)])
    assert log_scale.jvm_options(args).split() == ["-Xmx10g", "-Dfrom.env=1", "-Xms1g", "-Xmx1g"]
    monkeypatch.delenv("BENCH_JVM_OPTS")
    assert log_scale.jvm_options(log_scale.parse_args([])) == ""
    smoke = log_scale.parse_args(list(SMOKE_ARGS))
    assert smoke.heap == "1g"

"""The transaction-log scale benchmark (tests/benchmarks/log_scale.py) at a tiny size, with
Delta, so that the harness cannot rot. Figures at this size mean nothing; the harness checks
that both logs list the files they should, and this test that every figure was reported."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "benchmarks"))

import log_scale  # noqa: E402


def test_log_scale_smoke(tmp_path: Path) -> None:
    out = tmp_path / "bench-log"
    rc = log_scale.main([
        "--live", "300", "--commit", "10", "--compact", "200", "--prune", "500",
        "--partitions", "5", "--runs", "1", "--out", str(out),
    ])
    assert rc == 0, (out / "log-scale.log").read_text()[-4000:]
    result = json.loads((out / "log-scale.json").read_text())
    got = {(r["operation"], r["system"]) for r in result["results"]}
    ops = ["snapshot load", "incremental commit", "compaction", "one-partition pruning"]
    assert got == {(op, system) for op in ops for system in ("IndexTables", "Delta")}
    assert all(r["median_ms"] > 0 for r in result["results"])
    table = (out / "log-scale.md").read_text()
    assert all(op in table for op in ops)

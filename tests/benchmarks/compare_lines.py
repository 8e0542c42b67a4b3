"""Side by side: two runs of the benchmark suite (run.py) on two Spark lines, on the same machine.

    .venv/bin/python tests/benchmarks/run.py --rows 2000000 --runs 3 --out <a>
    .venv-spark4/bin/python tests/benchmarks/run.py --rows 2000000 --runs 3 --out <b>
    .venv/bin/python tests/benchmarks/compare_lines.py <a> <b> --out <dir>

For each ingest and each query (both table layouts, cache off), the median of each run, the
second's over the first's, and each run's IndexTables-over-Parquet ratio. Machines drift between
runs, so the ratios to Parquet (measured side by side within each run) are the fair comparison;
the raw times show the drift. Writes `<dir>/lines.md` and `<dir>/lines.json`.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from bench_session import write_report

# The IndexTables variants of results.json that are compared ("cold": every search run anew).
INGESTS = ("parquet", "indextables", "companion")
QUERY_SETS = (
    ("one write", "queries", ("indextables",)),
    ("appends", "queries_appends", ("indextables", "companion")),
)


def _median(entry: dict[str, Any] | None) -> float | None:
    return None if not entry or "median_s" not in entry else float(entry["median_s"])


def _row(what: str, times: tuple[float | None, ...]) -> dict[str, Any] | None:
    """A row of the comparison from (first, second, first's Parquet, second's Parquet) medians;
    None unless all four were measured."""
    ta, tb, pa, pb = times
    if ta is None or tb is None or pa is None or pb is None:
        return None
    return {
        "what": what,
        "a": ta,
        "b": tb,
        "a_vs_parquet": ta / pa,
        "b_vs_parquet": tb / pb,
        "b_over_a": tb / ta,
        "ratio_b_over_a": (tb / pb) / (ta / pa),
    }


def compare(a: dict[str, Any], b: dict[str, Any]) -> list[dict[str, Any]]:
    """One row per ingest and per (table, query, variant) both runs measured."""
    found: list[dict[str, Any] | None] = []
    pa, pb = _median(a["ingest"]["parquet"]), _median(b["ingest"]["parquet"])
    for fmt in INGESTS:
        times = (_median(a["ingest"].get(fmt)), _median(b["ingest"].get(fmt)), pa, pb)
        found.append(_row(f"ingest, {fmt}", times))
    for title, key, variants in QUERY_SETS:
        for name, qa in a[key].items():
            qb = b[key].get(name, {})
            qpa, qpb = _median(qa.get("parquet")), _median(qb.get("parquet"))
            for variant in variants:
                times = (_median(qa.get(variant)), _median(qb.get(variant)), qpa, qpb)
                found.append(_row(f"{title}, {name}, {variant}", times))
    return [row for row in found if row is not None]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("first", type=Path, help="results directory of the first run (results.json)")
    p.add_argument("second", type=Path, help="results directory of the second run")
    p.add_argument("--names", default="Spark 3.5,Spark 4.2", help="the two runs' names")
    p.add_argument("--out", type=Path, default=Path("out"))
    args = p.parse_args()
    a = json.loads((args.first / "results.json").read_text())
    b = json.loads((args.second / "results.json").read_text())
    na, nb = args.names.split(",")
    rows = compare(a, b)
    geo = statistics.geometric_mean([r["ratio_b_over_a"] for r in rows])
    lines = [
        f"# {na} and {nb}: the benchmark suite side by side",
        "",
        f"{na}: {a['date']}, load average {a['machine']['loadavg_start'][0]:.2f} at start. "
        f"{nb}: {b['date']}, load average {b['machine']['loadavg_start'][0]:.2f} at start. "
        f"{a['config']['rows']} rows, medians of {a['config']['runs']} runs "
        "(IndexTables with tantivy's leaf-search cache off). \"÷ Parquet\" is each run's own "
        "IndexTables time over its own Parquet time (side by side, within one run); the last "
        f"column is {nb}'s over {na}'s (1.00: the same).",
        "",
        f"Geometric mean over every row of the last column: **{geo:.2f}**.",
        "",
        f"| What | {na} s | {nb} s | {nb} ÷ {na}, s | {na} ÷ Parquet | {nb} ÷ Parquet "
        f"| {nb} ÷ {na}, of ÷ Parquet |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['what']} | {r['a']:.3f} | {r['b']:.3f} | {r['b_over_a']:.2f} | "
            f"{r['a_vs_parquet']:.3f} | "
            f"{r['b_vs_parquet']:.3f} | {r['ratio_b_over_a']:.2f} |"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    write_report(args.out, "lines", {"rows": rows, "geometric_mean": geo}, lines)


if __name__ == "__main__":
    main()

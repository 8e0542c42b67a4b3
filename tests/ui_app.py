"""A Spark application with its UI on, for the tests that read what the UI shows: it writes an
IndexTables table, runs the queries the caller names, then prints one JSON line (the UI's
address, the application id, and each query's SQL execution description) and keeps the
application alive until its standard input closes or says "quit".

    python tests/ui_app.py <table path> <ui port>

Run by tests/test_scan_metrics.py in a process of its own: the suites' shared session has no
UI, and a process holds one SparkContext.
"""

from __future__ import annotations

import json
import sys

from pyspark.sql import functions as F

import indextables
from helpers import session_builder

# Twelve splits: three appends of four days each, every split 500 rows with ids of its own.
DAYS = ("2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04")
APPENDS = 3
ROWS_PER_SPLIT = 500

# Each query: its SQL execution description, and the SQL (over the table `t`).
QUERIES = {
    # Three of twelve splits are of that day: nine pruned by partition.
    "metrics:partition": "SELECT id FROM t WHERE day = '2024-01-02'",
    # Ids 0-499 were the first append of the first day: eleven splits pruned by statistics.
    "metrics:statistics": "SELECT id FROM t WHERE id < 100",
    # A search read by tasks: every split searched, the matches counted.
    "metrics:search": "SELECT id FROM t WHERE message indexquery 'timeout'",
    # A search the driver answers: the same metrics, from the driver.
    "metrics:driver": "SELECT id FROM t WHERE message indexquery 'timeout' AND day = '2024-01-03'",
}


def main() -> None:
    path, port = sys.argv[1], sys.argv[2]
    builder = session_builder(
        "indextables-ui",
        {
            "spark.ui.enabled": "true",
            "spark.ui.port": port,
            "spark.port.maxRetries": "0",
            # The UI keeps every execution of this short application.
            "spark.sql.ui.retainedExecutions": "1000",
        },
    )
    spark = indextables.configure_spark(builder).getOrCreate()
    spark.sparkContext.setLogLevel("WARN")
    for a in range(APPENDS):
        first = a * len(DAYS) * ROWS_PER_SPLIT
        day_of = F.element_at(
            F.array(*[F.lit(d) for d in DAYS]),
            ((F.col("id") - first) / ROWS_PER_SPLIT).cast("int") + 1,
        )
        rows = spark.range(first, first + len(DAYS) * ROWS_PER_SPLIT).select(
            F.col("id"),
            day_of.alias("day"),
            F.when(F.col("id") % 7 == 0, F.lit("connection timeout after retry"))
            .otherwise(F.lit("request served in time"))
            .alias("message"),
        )
        rows.coalesce(1).write.format("indextables").mode("append").option(
            "spark.indextables.indexing.typemap.message", "text"
        ).partitionBy("day").save(path)
    spark.read.format("indextables").load(path).createOrReplaceTempView("t")
    counts: dict[str, int] = {}
    for description, sql in QUERIES.items():
        by_tasks = description != "metrics:driver"
        spark.conf.set("spark.indextables.read.driverSearch.maxRows", "0" if by_tasks else "10000")
        spark.sparkContext.setJobDescription(description)
        counts[description] = len(spark.sql(sql).collect())
    spark.sparkContext.setJobDescription(None)  # type: ignore[arg-type]
    print(
        json.dumps(
            {
                "url": spark.sparkContext.uiWebUrl,
                "appId": spark.sparkContext.applicationId,
                "rows": counts,
            }
        ),
        flush=True,
    )
    for line in sys.stdin:
        if line.strip() == "quit":
            break
    spark.stop()


if __name__ == "__main__":
    main()

"""The Python package used over Spark Connect, as a user with no JVM beside PySpark uses it:
run by tests/test_connect.py in a process of its own (a Connect session switches PySpark's
functions to their Connect forms for the whole process, which the suites' classic session must
not see).

    python tests/connect_client.py <sc://host:port> <work folder>

Runs each check below and prints one JSON line: each check's name, and "ok" or what failed.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import traceback
from collections.abc import Callable
from pathlib import Path

import pyspark
from pyspark.errors import AnalysisException
from pyspark.sql import Row, SparkSession
from pyspark.sql import functions as F

import indextables
from indextables import IndexTable, InvalidQueryError, TableNotFoundError
from indextables.functions import indexquery, snippet

ROWS = [
    (1, "ERROR", "connection timeout after 30s"),
    (2, "INFO", "block served in time"),
    (3, "WARN", "timeout waiting for lock"),
    (4, "INFO", "connection reset by peer"),
]
TIMEOUT_IDS = [1, 3]


def main() -> None:
    url, work = sys.argv[1], Path(sys.argv[2])
    builder = indextables.configure_spark(SparkSession.builder.remote(url))
    spark = builder.getOrCreate()
    path = str(work / "logs")
    df = spark.createDataFrame(ROWS, "id long, level string, message string")
    df.write.format("indextables").option(
        "spark.indextables.indexing.typemap.message", "text"
    ).save(path)
    df.write.format("indextables").mode("append").option(
        "spark.indextables.indexing.typemap.message", "text"
    ).save(path)

    def ids(rows: list[Row]) -> list[int]:
        return sorted({int(r["id"]) for r in rows})

    def sql_indexquery() -> None:
        got = spark.sql(
            f"SELECT id FROM indextables.`{path}` WHERE message indexquery 'timeout'"
        ).collect()
        assert ids(got) == TIMEOUT_IDS, got

    def column_functions() -> None:
        table = spark.read.format("indextables").load(path)
        got = table.filter(indexquery(F.col("message"), "timeout")).collect()
        assert ids(got) == TIMEOUT_IDS, got
        got = table.filter(indexquery("message", "reset")).collect()
        assert ids(got) == [4], got

    def index_table_by_path() -> None:
        table = IndexTable.for_path(spark, path)
        assert table.sql_name == f"'{path}'", table.sql_name
        assert [h["version"] for h in table.history().collect()] == [1, 0]
        (state,) = table.describe().collect()
        assert (state["version"], state["num_records"]) == (1, 8), state
        assert table.checkpoint() == 1
        top = table.search("timeout", k=2, columns=["id"], highlight="message").collect()
        # The table holds ROWS twice: four rows match, with equal scores, so any two may win.
        assert len(top) == 2 and {r["id"] for r in top} <= set(TIMEOUT_IDS), top
        assert top[0]["_score"] == top[1]["_score"] > 0, top
        assert all("<b>timeout</b>" in r["message_highlight"] for r in top), top
        (merged,) = table.merge_splits().collect()
        assert merged is not None
        assert table.purge(dry_run=True).count() >= 0
        hit = table.to_df().select(snippet("message", "reset").alias("s")).collect()
        assert any(r["s"] and "<b>reset</b>" in r["s"] for r in hit), hit

    def index_table_by_name() -> None:
        df.write.format("indextables").saveAsTable("connect_logs")
        table = IndexTable.for_name(spark, "default.connect_logs")
        assert table.sql_name == "`default`.`connect_logs`", table.sql_name
        assert table.to_df().count() == len(ROWS)

    def malformed_query_is_invalid_query_error() -> None:
        try:
            spark.sql(
                f"SELECT * FROM indextables.`{path}` WHERE message indexquery 'AND AND ('"
            ).collect()
        except InvalidQueryError as e:
            assert isinstance(e, AnalysisException), type(e).__mro__
            assert e.getErrorClass() == "INDEXTABLES_INVALID_INDEXQUERY", e.getErrorClass()
            assert str(e).startswith("[INDEXTABLES_INVALID_INDEXQUERY]"), str(e)
            return
        raise AssertionError("a malformed query did not fail")

    def missing_table_is_table_not_found_error() -> None:
        try:
            IndexTable.for_path(spark, str(work / "nothing-here"))
        except TableNotFoundError as e:
            assert e.getErrorClass() == "INDEXTABLES_TABLE_NOT_FOUND", e.getErrorClass()
            assert "nothing-here" in str(e)
            return
        raise AssertionError("a missing table was found")

    def companion_stream_starts_and_stops() -> None:
        source = str(work / "parquet")
        spark.createDataFrame(ROWS, "id long, level string, message string").write.parquet(source)
        index = str(work / "companion")
        spark.sql(
            f"BUILD INDEXTABLES COMPANION FOR PARQUET '{source}' AT LOCATION '{index}'"
        ).collect()
        table = IndexTable.for_path(spark, index)
        stream = table.stream_companion(1)
        stream.stop(timeout=120)
        assert not stream.is_active, stream
        assert stream.exception is None, stream.exception
        assert table.to_df().count() == len(ROWS)

    checks: dict[str, Callable[[], None]] = {
        "sql_indexquery": sql_indexquery,
        "column_functions": column_functions,
        "index_table_by_path": index_table_by_path,
        "index_table_by_name": index_table_by_name,
        "malformed_query_is_invalid_query_error": malformed_query_is_invalid_query_error,
        "missing_table_is_table_not_found_error": missing_table_is_table_not_found_error,
        "companion_stream_starts_and_stops": companion_stream_starts_and_stops,
    }
    results: dict[str, str] = {}
    for name, check in checks.items():
        try:
            check()
            results[name] = "ok"
        except Exception:  # noqa: BLE001 (the test reports each check's failure)
            results[name] = traceback.format_exc()[-3000:]
    results["session_type"] = type(spark).__module__
    # What the client process has: a Python-only `pyspark-client` has no py4j and no JVM.
    results["pyspark_version"] = pyspark.__version__
    results["py4j"] = "absent" if importlib.util.find_spec("py4j") is None else "present"
    print(json.dumps(results), flush=True)
    spark.stop()


if __name__ == "__main__":
    main()

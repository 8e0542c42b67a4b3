"""SQL `indexquery` end to end through the package's builder helper.

Every result is checked against row ids computed here, in Python, from the same rows: text is
tokenized as tantivy's `default` tokenizer does for ASCII (split at every non-alphanumeric
character, lower-cased), string columns match whole values. The pushed query is read from the
physical plan's scan node.
"""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Optional

import pytest
from pyspark.sql import SparkSession

from helpers import TYPEMAP, error_text, read_table, scan_node, write_table

pytestmark = pytest.mark.usefixtures("layout")

WORDS = [
    "timeout",
    "connection",
    "reset",
    "disk",
    "full",
    "error",
    "block",
    "served",
    "peer",
    "retry",
    "lock",
    "waiting",
    "socket",
    "closed",
    "user",
    "login",
]
LEVELS = ["ERROR", "WARN", "INFO", None]
COMPONENTS = ["disk", "net", "auth"]

Row = tuple[int, Optional[str], str, Optional[str]]


def tokens(text: str | None) -> list[str]:
    return [t.lower() for t in re.findall(r"[A-Za-z0-9]+", text or "")]


def make_logs(n: int, seed: int) -> list[Row]:
    rng = random.Random(seed)
    rows: list[Row] = []
    for i in range(n):
        words = [rng.choice(WORDS) for _ in range(rng.randint(2, 7))]
        sep = rng.choice([" ", ", ", "-", ": "])
        upper = [w.upper() if rng.random() < 0.2 else w for w in words]
        message = None if i % 17 == 0 else sep.join(upper)
        rows.append((i, LEVELS[i % 4] if i % 13 else None, rng.choice(COMPONENTS), message))
    return rows


LOGS = make_logs(600, 7)
NOTES = [(i, " ".join(random.Random(i).sample(WORDS, 3))) for i in range(0, 600, 3)]


def ids_where(pred: Callable[[Row], bool]) -> list[int]:
    return sorted(r[0] for r in LOGS if pred(r))


def has(row: Row, word: str) -> bool:
    return word in tokens(row[3])


@pytest.fixture(scope="module")
def tables(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root: Path = tmp_path_factory.mktemp("indexquery")
    logs = spark.createDataFrame(LOGS, "id long, level string, component string, message string")
    notes = spark.createDataFrame(NOTES, "id long, note string")
    paths = {"logs": str(root / "logs"), "notes": str(root / "notes")}
    write_table(logs, paths["logs"], options={TYPEMAP + "message": "text"})
    write_table(notes, paths["notes"], options={TYPEMAP + "note": "text"})
    read_table(spark, paths["logs"]).createOrReplaceTempView("iq_logs")
    read_table(spark, paths["notes"]).createOrReplaceTempView("iq_notes")
    return paths


def sql_ids(spark: SparkSession, sql: str) -> list[int]:
    return sorted(r[0] for r in spark.sql(sql).collect())


def test_helper_sets_the_extensions(spark: SparkSession) -> None:
    import indextables

    extensions = spark.conf.get("spark.sql.extensions")
    assert extensions is not None
    assert indextables.EXTENSIONS_CLASS in extensions.split(",")


def test_temp_view_and_regular_predicate(spark: SparkSession, tables: dict[str, str]) -> None:
    sql = (
        "SELECT id FROM iq_logs WHERE level = 'ERROR' AND "
        "message indexquery 'timeout OR connection'"
    )
    expected = ids_where(lambda r: r[1] == "ERROR" and (has(r, "timeout") or has(r, "connection")))
    assert expected and sql_ids(spark, sql) == expected
    scan = scan_node(spark.sql(sql))
    assert "PushedIndexQuery: [message indexquery 'timeout OR connection']" in scan
    for part in ('"field":"level"', '"text":"timeout"', '"text":"connection"'):
        assert part in scan


def test_count_and_group_by_over_an_indexquery_are_pushed(
    spark: SparkSession, tables: dict[str, str]
) -> None:
    # An indexquery is exact by definition (it is the native query), so COUNT(*) is answered
    # per split by the index, with and without a GROUP BY on a string column.
    sql = "SELECT COUNT(*) AS n FROM iq_logs WHERE message indexquery 'timeout OR connection'"
    expected = len(ids_where(lambda r: has(r, "timeout") or has(r, "connection")))
    df = spark.sql(sql)
    assert expected and df.collect()[0]["n"] == expected
    assert "PushedAggregation: [COUNT(*)], PushedGroupBy: []" in scan_node(df)

    sql = (
        "SELECT level, COUNT(*) AS n FROM iq_logs WHERE component = 'disk' "
        "AND message indexquery '\"peer timeout\" OR lock' GROUP BY level"
    )

    def match(r: Row) -> bool:
        t = tokens(r[3])
        phrase = any(t[i : i + 2] == ["peer", "timeout"] for i in range(len(t)))
        return r[2] == "disk" and (phrase or "lock" in t)

    counts: dict[str | None, int] = {}
    for r in LOGS:
        if match(r):
            counts[r[1]] = counts.get(r[1], 0) + 1
    df = spark.sql(sql)
    assert None in counts and {r["level"]: r["n"] for r in df.collect()} == counts
    assert "PushedGroupBy: [level]" in scan_node(df)


def test_cte(spark: SparkSession, tables: dict[str, str]) -> None:
    sql = (
        "WITH errors AS (SELECT * FROM iq_logs WHERE level = 'ERROR') "
        "SELECT id FROM errors WHERE message indexquery '\"peer timeout\"'"
    )

    def phrase(r: Row) -> bool:
        t = tokens(r[3])
        return any(t[i : i + 2] == ["peer", "timeout"] for i in range(len(t)))

    expected = ids_where(lambda r: r[1] == "ERROR" and phrase(r))
    assert expected and sql_ids(spark, sql) == expected


def test_sql_temp_view_over_a_path(spark: SparkSession, tables: dict[str, str]) -> None:
    """A view made in SQL maps its columns through casts to their own types; indexquery looks
    through them to the table, and is pushed."""
    spark.sql(
        f"CREATE OR REPLACE TEMP VIEW iq_sql_view AS SELECT * FROM indextables.`{tables['logs']}`"
    )
    sql = "SELECT id FROM iq_sql_view WHERE message indexquery 'timeout OR connection'"
    expected = ids_where(lambda r: has(r, "timeout") or has(r, "connection"))
    assert expected and sql_ids(spark, sql) == expected
    assert "PushedIndexQuery: [message indexquery 'timeout OR connection']" in scan_node(
        spark.sql(sql)
    )


def test_subquery_alias_with_renamed_column(spark: SparkSession, tables: dict[str, str]) -> None:
    sql = (
        "SELECT s.id FROM (SELECT id, message AS m FROM iq_logs) s "
        "WHERE s.m indexquery 'lock AND retry'"
    )
    expected = ids_where(lambda r: has(r, "lock") and has(r, "retry"))
    assert expected and sql_ids(spark, sql) == expected


def test_join_pushes_each_side_to_its_scan(spark: SparkSession, tables: dict[str, str]) -> None:
    sql = (
        "SELECT l.id FROM iq_logs l JOIN iq_notes n ON l.id = n.id "
        "WHERE l.message indexquery 'disk' AND n.note indexquery 'socket'"
    )
    notes = {i: tokens(note) for i, note in NOTES}
    expected = ids_where(lambda r: has(r, "disk") and "socket" in notes.get(r[0], []))
    assert expected and sql_ids(spark, sql) == expected
    plan = str(spark.sql(sql)._jdf.queryExecution().executedPlan().toString())
    assert "PushedIndexQuery: [message indexquery 'disk']" in plan
    assert "PushedIndexQuery: [note indexquery 'socket']" in plan


def test_indexquery_inside_or(spark: SparkSession, tables: dict[str, str]) -> None:
    sql = "SELECT id FROM iq_logs WHERE component = 'auth' OR message indexquery 'peer'"
    expected = ids_where(lambda r: r[2] == "auth" or has(r, "peer"))
    assert sql_ids(spark, sql) == expected
    pushed = "PushedIndexQuery: [(EqualTo(component,auth) OR message indexquery 'peer')]"
    assert pushed in scan_node(spark.sql(sql))


def test_indexquery_under_not(spark: SparkSession, tables: dict[str, str]) -> None:
    # NOT(a OR b) is TRUE only where a and b are both FALSE; a null level makes `level = 'WARN'`
    # null, so those rows drop out. An indexquery is FALSE for a null message.
    sql = "SELECT id FROM iq_logs WHERE NOT (level = 'WARN' OR message indexquery 'disk')"
    expected = ids_where(lambda r: r[1] is not None and r[1] != "WARN" and not has(r, "disk"))
    assert sql_ids(spark, sql) == expected
    sql2 = "SELECT id FROM iq_logs WHERE NOT message indexquery 'disk'"
    assert sql_ids(spark, sql2) == ids_where(lambda r: not has(r, "disk"))


def test_all_fields_search(spark: SparkSession, tables: dict[str, str]) -> None:
    # String fields match the whole value as written; text fields match the lower-cased token.
    def any_field(r: Row, word: str) -> bool:
        return r[1] == word or r[2] == word or word.lower() in tokens(r[3])

    expected = ids_where(lambda r: any_field(r, "ERROR") or any_field(r, "disk"))
    for sql in (
        "SELECT id FROM iq_logs WHERE indexqueryall('ERROR OR disk')",
        "SELECT id FROM iq_logs WHERE _indexall indexquery 'ERROR OR disk'",
    ):
        assert sql_ids(spark, sql) == expected


def test_textsearch_and_fieldmatch(spark: SparkSession, tables: dict[str, str]) -> None:
    assert sql_ids(spark, "SELECT id FROM iq_logs WHERE message textsearch 'socket'") == ids_where(
        lambda r: has(r, "socket")
    )
    assert sql_ids(spark, "SELECT id FROM iq_logs WHERE component fieldmatch 'net'") == ids_where(
        lambda r: r[2] == "net"
    )
    with pytest.raises(Exception) as e1:
        spark.sql("SELECT id FROM iq_logs WHERE component textsearch 'net'")
    assert "indexed as 'string'" in error_text(e1.value)
    with pytest.raises(Exception) as e2:
        spark.sql("SELECT id FROM iq_logs WHERE message fieldmatch 'disk'")
    assert "indexed as 'text'" in error_text(e2.value)


def test_invalid_query_quotes_the_query(spark: SparkSession, tables: dict[str, str]) -> None:
    for q in ["(((", "disk AND", "", "nosuch:x"]:
        with pytest.raises(Exception) as e:
            spark.sql(f"SELECT id FROM iq_logs WHERE message indexquery '{q}'").collect()
        assert f"Invalid IndexQuery '{q}'" in error_text(e.value)


def test_indexquery_on_a_non_indextables_view_fails_at_analysis(spark: SparkSession) -> None:
    spark.createDataFrame([(1, "x")], "id int, message string").createOrReplaceTempView("iq_plain")
    with pytest.raises(Exception) as e:
        spark.sql("SELECT * FROM iq_plain WHERE message indexquery 'x'")
    assert "not an IndexTables table" in error_text(e.value)


def test_two_threads_query_two_tables(spark: SparkSession, tables: dict[str, str]) -> None:
    notes = {i: tokens(note) for i, note in NOTES}
    cases = [
        (
            "SELECT id FROM iq_logs WHERE message indexquery 'timeout'",
            ids_where(lambda r: has(r, "timeout")),
        ),
        (
            "SELECT id FROM iq_notes WHERE note indexquery 'login'",
            sorted(i for i, t in notes.items() if "login" in t),
        ),
    ]
    failures: list[str] = []
    barrier = threading.Barrier(2)

    def run(sql: str, expected: list[int]) -> None:
        barrier.wait()
        for _ in range(8):
            got = sql_ids(spark, sql)
            if got != expected:
                failures.append(f"{sql}: {len(got)} rows, expected {len(expected)}")

    threads = [threading.Thread(target=run, args=case) for case in cases]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads)
    assert not failures, failures


def test_loghub_phrase_queries_match_their_templates(
    spark: SparkSession, shared_data: Path, tmp_path: Path
) -> None:
    """Loghub's HDFS sample: which lines a phrase matches is known from their event templates."""
    import csv

    source = shared_data / "loghub" / "HDFS_2k.log_structured.csv"
    if not source.is_file():
        pytest.skip(f"{source} is absent")
    with source.open(newline="", encoding="utf-8") as f:
        lines = [(int(r["LineId"]), r["Content"], r["EventTemplate"]) for r in csv.DictReader(f)]
    path = str(tmp_path / "hdfs")
    df = spark.createDataFrame(lines, "id long, content string, template string")
    write_table(df, path, options={TYPEMAP + "content": "text"})
    read_table(spark, path).createOrReplaceTempView("iq_hdfs")
    cases: dict[str, Callable[[str], bool]] = {
        '"Receiving block"': lambda t: "Receiving block" in t,
        "PacketResponder AND terminating": lambda t: "PacketResponder" in t and "terminating" in t,
        '"Deleting block" OR "Received block"': lambda t: (
            "Deleting block" in t or "Received block" in t
        ),
    }
    for query, in_template in cases.items():
        expected = sorted(i for i, _, t in lines if in_template(t))
        assert expected
        literal = query.replace("'", "\\'")
        got = sql_ids(spark, f"SELECT id FROM iq_hdfs WHERE content indexquery '{literal}'")
        assert got == expected, query

"""Ranked search: the `_score` column and the top-k pushed down by it, on both layouts.

The oracle is PyPI `tantivy` 0.27.0 ranking gensim's Lee corpus (300 documents) in one index
(`tests/ranking_oracle.py`). The same documents are written as an IndexTables table three ways:
one split, ten appends (ten splits), and the ten appends merged. For 50 queries, every table's
`_score` of every match, and its top 10 by `_score`, must equal the oracle's within 1e-4
relative: scores use the table's statistics, not each split's. A pushed top-k must give the
rows Spark gives sorting every match by `_score` itself, and no split may return more than k.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import ranking_oracle
from helpers import FORMAT, TYPEMAP, error_text, read_table, scan_node
from indextables import IndexTable
from indextables.functions import indexquery, score, snippet

pytestmark = [
    pytest.mark.usefixtures("layout"),
    pytest.mark.skipif(
        not ranking_oracle.is_installed(), reason="build/package.sh installs gensim and tantivy"
    ),
]

APPENDS = 10
K = 10


@pytest.fixture(scope="module")
def docs() -> list[tuple[int, str]]:
    return ranking_oracle.lee_documents()


@pytest.fixture(scope="module")
def oracle() -> ranking_oracle.TantivyOracle:
    return ranking_oracle.lee_oracle()


@pytest.fixture(scope="module")
def tables(
    spark: SparkSession,
    docs: list[tuple[int, str]],
    layout: str,
    tmp_path_factory: pytest.TempPathFactory,
) -> dict[str, str]:
    """The corpus as one split, as ten appends, and as the ten appends merged."""
    root: Path = tmp_path_factory.mktemp(f"ranked-{layout}")
    df = spark.createDataFrame(docs, "id long, body string")
    paths = {name: str(root / name) for name in ("one", "appends", "merged")}

    def write(frame: DataFrame, path: str) -> None:
        frame.write.format(FORMAT).option(TYPEMAP + "body", "text").mode("append").save(path)

    write(df.coalesce(1), paths["one"])
    for i in range(APPENDS):
        part = df.where(F.col("id") % APPENDS == i).coalesce(1)
        write(part, paths["appends"])
        write(part, paths["merged"])
    spark.sql(f"MERGE SPLITS '{paths['merged']}'").collect()
    return paths


def scores_of(spark: SparkSession, path: str, query: str) -> dict[int, float]:
    rows = (
        read_table(spark, path).filter(indexquery("body", query)).select("id", "_score").collect()
    )
    return {int(r["id"]): float(r["_score"]) for r in rows}


def top_of(spark: SparkSession, path: str, query: str, k: int = K) -> list[tuple[int, float]]:
    df = (
        read_table(spark, path)
        .filter(indexquery("body", query))
        .orderBy(score().desc())
        .limit(k)
        .select("id", "_score")
    )
    return [(int(r["id"]), float(r["_score"])) for r in df.collect()]


def assert_scores_match(ours: dict[int, float], theirs: dict[int, float], what: str) -> None:
    assert set(ours) == set(theirs), f"{what}: matched ids differ"
    wrong = {
        i: (ours[i], theirs[i])
        for i in theirs
        if not ranking_oracle.relative_close(ours[i], theirs[i])
    }
    assert not wrong, f"{what}: scores differ (ours, tantivy's): {dict(list(wrong.items())[:5])}"


def assert_top_matches(
    ours: list[tuple[int, float]], oracle: ranking_oracle.TantivyOracle, query: str, what: str
) -> None:
    """Our top-k is a top-k of the oracle: its scores, in order, and each id's own score."""
    theirs = oracle.top(query, K)
    every = oracle.scores(query)
    assert len(ours) == len(theirs), f"{what}: {len(ours)} rows, tantivy {len(theirs)}"
    for (i, s), (_, t) in zip(ours, theirs):
        assert ranking_oracle.relative_close(s, t), f"{what}: score {s} where tantivy has {t}"
        assert ranking_oracle.relative_close(s, every[i]), f"{what}: id {i} scored {s}"


@pytest.mark.parametrize("table", ["one", "appends", "merged"])
def test_scores_of_every_match_equal_tantivys_in_one_index(
    spark: SparkSession,
    tables: dict[str, str],
    oracle: ranking_oracle.TantivyOracle,
    table: str,
) -> None:
    for query in ranking_oracle.lee_queries(50):
        ours = scores_of(spark, tables[table], query)
        assert_scores_match(ours, oracle.scores(query), f"{table} table, {query!r}")


@pytest.mark.parametrize("table", ["one", "appends", "merged"])
def test_top_10_equals_tantivys_whatever_the_splits(
    spark: SparkSession,
    tables: dict[str, str],
    oracle: ranking_oracle.TantivyOracle,
    table: str,
) -> None:
    for query in ranking_oracle.lee_queries(50):
        assert_top_matches(
            top_of(spark, tables[table], query), oracle, query, f"{table} table, {query!r}"
        )


def test_the_top_k_is_pushed_and_each_split_returns_at_most_k(
    spark: SparkSession, tables: dict[str, str]
) -> None:
    query = ranking_oracle.lee_queries(50)[1]
    df = (
        read_table(spark, tables["appends"])
        .filter(indexquery("body", query))
        .orderBy(score().desc())
        .limit(3)
    )
    node = scan_node(df)
    assert "PushedTopN: _score DESC LIMIT 3" in node, node
    assert "Scores: BM25 over 300 docs of 10 splits" in node, node
    # Spark's own sort is gone: the scan answers in order.
    plan = str(df._jdf.queryExecution().executedPlan().toString())
    assert "Sort" not in plan and "TakeOrdered" not in plan, plan
    assert "(3 rows)" in node, node


@pytest.fixture
def by_tasks(spark: SparkSession) -> Iterator[None]:
    """Searches read by tasks, as on a table too big for the driver."""
    spark.conf.set("spark.indextables.read.driverSearch.maxRows", "0")
    yield
    spark.conf.unset("spark.indextables.read.driverSearch.maxRows")


@pytest.mark.parametrize("k", [1, 5, 40])
def test_a_top_k_read_by_tasks_equals_spark_sorting_every_match(
    spark: SparkSession, tables: dict[str, str], by_tasks: None, k: int
) -> None:
    for query in ranking_oracle.lee_queries(12):
        everything = scores_of(spark, tables["appends"], query)
        best = sorted(everything.items(), key=lambda e: (-e[1], e[0]))
        ours = top_of(spark, tables["appends"], query, k)
        assert [s for _, s in ours] == pytest.approx([s for _, s in best[:k]], rel=1e-6)
        assert all(everything[i] == pytest.approx(s, rel=1e-6) for i, s in ours)
        df = (
            read_table(spark, tables["appends"])
            .filter(indexquery("body", query))
            .orderBy(score().desc())
            .limit(k)
        )
        node = scan_node(df)
        assert f"PushedTopN: _score DESC LIMIT {k}" in node, node
        # The tasks read the winners only: at most k rows leave the scan.
        df.collect()
        metrics = df._jdf.queryExecution().executedPlan().collectLeaves().head().metrics()
        assert metrics.apply("numOutputRows").value() <= k


def test_later_sort_keys_decide_among_tied_scores(
    spark: SparkSession, tables: dict[str, str]
) -> None:
    """Rows tied on `_score` are ordered by the next key, exactly as Spark's own sort would."""
    path = tables["appends"]
    query = ranking_oracle.lee_queries(50)[0]
    df = read_table(spark, path).filter(indexquery("body", query))
    ours = df.orderBy(score().desc(), F.col("id").desc()).limit(2).select("id").collect()
    every = df.select("id", "_score").collect()
    spark_sorted = sorted(every, key=lambda r: (-r["_score"], -r["id"]))[:2]
    assert [r["id"] for r in ours] == [r["id"] for r in spark_sorted]
    node = scan_node(df.orderBy(score().desc(), F.col("id").desc()).limit(2))
    assert "PushedTopN: _score DESC LIMIT 2 (ties kept" in node, node


def test_the_same_query_returns_the_same_rows_in_the_same_order(
    spark: SparkSession, tables: dict[str, str]
) -> None:
    for query in ranking_oracle.lee_queries(8):
        first = top_of(spark, tables["appends"], query, 4)
        assert all(top_of(spark, tables["appends"], query, 4) == first for _ in range(3))


def test_score_is_null_without_a_text_clause_and_other_filters_add_nothing(
    spark: SparkSession, tables: dict[str, str], oracle: ranking_oracle.TantivyOracle
) -> None:
    path = tables["appends"]
    plain = read_table(spark, path).where("id < 5").select("id", "_score").collect()
    assert len(plain) == 5 and all(r["_score"] is None for r in plain)
    query = ranking_oracle.lee_queries(50)[1]
    filtered = (
        read_table(spark, path)
        .filter(indexquery("body", query) & (F.col("id") % 2 == 0))
        .select("id", "_score")
        .collect()
    )
    expected = {i: s for i, s in oracle.scores(query).items() if i % 2 == 0}
    assert_scores_match({r["id"]: r["_score"] for r in filtered}, expected, "filtered")
    # A text clause OR a filter: rows the filter alone matched have no score.
    either = (
        read_table(spark, path)
        .filter(indexquery("body", query) | (F.col("id") == 0))
        .select("id", "_score")
        .collect()
    )
    scored = {r["id"]: r["_score"] for r in either}
    matched = oracle.scores(query)
    for i, s in scored.items():
        if i in matched:
            assert ranking_oracle.relative_close(s, matched[i])
        else:
            assert i == 0 and s is None


def test_where_score_filters_and_ascending_order_is_sorted_by_spark(
    spark: SparkSession, tables: dict[str, str], oracle: ranking_oracle.TantivyOracle
) -> None:
    path = tables["appends"]
    query = ranking_oracle.lee_queries(50)[1]
    every = oracle.scores(query)
    cut = sorted(every.values())[len(every) // 2]
    above = read_table(spark, path).filter(indexquery("body", query)).where(F.col("_score") > cut)
    assert {r["id"] for r in above.select("id").collect()} == {
        i for i, s in every.items() if s > cut
    }
    ascending = (
        read_table(spark, path).filter(indexquery("body", query)).orderBy(score().asc()).limit(3)
    )
    assert "PushedTopN" not in scan_node(ascending)
    lowest = sorted(every.values())[:3]
    assert [r["_score"] for r in ascending.select("_score").collect()] == pytest.approx(
        lowest, rel=1e-4
    )


def test_sql_select_star_with_score_and_order_by(
    spark: SparkSession, tables: dict[str, str], oracle: ranking_oracle.TantivyOracle
) -> None:
    query = ranking_oracle.lee_queries(50)[2]
    rows = spark.sql(
        f"SELECT *, _score FROM indextables.`{tables['merged']}` "
        f"WHERE body indexquery '{query}' ORDER BY _score DESC LIMIT {K}"
    ).collect()
    assert rows and set(rows[0].asDict()) == {"id", "body", "_score"}
    assert_top_matches(
        [(r["id"], r["_score"]) for r in rows], oracle, query, "SQL SELECT *, _score"
    )


def test_index_table_search(
    spark: SparkSession, tables: dict[str, str], oracle: ranking_oracle.TantivyOracle
) -> None:
    query = ranking_oracle.lee_queries(50)[3]
    found = IndexTable.for_path(spark, tables["appends"]).search(query, k=K, columns=["id"])
    assert found.columns == ["id", "_score"]
    assert_top_matches(
        [(r["id"], r["_score"]) for r in found.collect()], oracle, query, "IndexTable.search"
    )
    with pytest.raises(ValueError, match="k must be a positive int"):
        IndexTable.for_path(spark, tables["appends"]).search(query, k=0)
    with pytest.raises(ValueError, match="query must be a non-empty str"):
        IndexTable.for_path(spark, tables["appends"]).search(" ")


def test_index_table_search_highlights_the_rows_it_returns(
    spark: SparkSession, tables: dict[str, str]
) -> None:
    query = ranking_oracle.lee_queries(50)[7]
    table = IndexTable.for_path(spark, tables["appends"])
    plain = [(r["id"], r["_score"]) for r in table.search(query, k=K, columns=["id"]).collect()]
    found = table.search(query, k=K, columns=["id"], highlight="body")
    assert found.columns == ["id", "_score", "body_highlight"]
    rows = found.collect()
    # The same rows in the same order as without highlights.
    assert [(r["id"], r["_score"]) for r in rows] == plain
    # Each fragment is the snippet function's for that row, and every returned row has one
    # (`body` is the only string column, so each match matched there).
    ids = [r["id"] for r in rows]
    expected = {
        r["id"]: r["s"]
        for r in read_table(spark, tables["appends"])
        .where(F.col("id").isin(ids))
        .select("id", snippet("body", query).alias("s"))
        .collect()
    }
    for r in rows:
        assert r["body_highlight"] is not None and "<b>" in r["body_highlight"], r
        assert r["body_highlight"] == expected[r["id"]]
    # `highlight` may name a column the result does not return.
    assert table.search(query, k=2, columns=["id"], highlight=["body"]).columns == [
        "id",
        "_score",
        "body_highlight",
    ]
    with pytest.raises(ValueError, match="highlight: no column 'nope'"):
        table.search(query, highlight="nope")
    with pytest.raises(TypeError, match="highlight must be a column name"):
        table.search(query, highlight=[1])  # type: ignore[list-item]


def test_deleted_rows_are_never_ranked(
    spark: SparkSession,
    docs: list[tuple[int, str]],
    layout: str,
    tmp_path: Path,
    oracle: ranking_oracle.TantivyOracle,
) -> None:
    path = str(tmp_path / "deleted")
    df = spark.createDataFrame(docs, "id long, body string")
    for i in range(3):
        (
            df.where(F.col("id") % 3 == i)
            .coalesce(1)
            .write.format(FORMAT)
            .option(TYPEMAP + "body", "text")
            .mode("append")
            .save(path)
        )
    query = ranking_oracle.lee_queries(50)[1]
    best = [i for i, _ in oracle.top(query, 3)]
    spark.sql(f"DELETE FROM indextables.`{path}` WHERE id IN ({', '.join(map(str, best))})")
    ours = top_of(spark, path, query, K)
    assert not {i for i, _ in ours} & set(best)
    # The deleted rows still count in the statistics (as tantivy's own deletes do until a
    # merge): the survivors keep the scores the oracle gives them.
    every = oracle.scores(query)
    assert all(ranking_oracle.relative_close(s, every[i]) for i, s in ours)
    assert len(ours) == min(K, len(every) - len(best))


def test_a_score_needs_a_table_without_its_own_score_column(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "own")
    spark.createDataFrame([(1, "a b", 0.5)], "id long, body string, _score double").write.format(
        FORMAT
    ).option(TYPEMAP + "body", "text").save(path)
    rows = (
        read_table(spark, path)
        .filter(indexquery("body", "a"))
        .orderBy(score().desc())
        .limit(1)
        .collect()
    )
    # The data column hides the metadata column, as Spark's rule says.
    assert rows[0]["_score"] == 0.5
    assert "PushedTopN" not in scan_node(
        read_table(spark, path).filter(indexquery("body", "a")).orderBy(score().desc()).limit(1)
    )


def test_a_malformed_query_names_itself(spark: SparkSession, tables: dict[str, str]) -> None:
    with pytest.raises(Exception) as e:
        top_of(spark, tables["one"], "body:(unclosed", 3)
    assert "INDEXTABLES_INVALID_INDEXQUERY" in error_text(e.value)
    assert "body:(unclosed" in error_text(e.value)


def test_a_split_gone_from_under_a_ranked_query_is_named(
    spark: SparkSession, docs: list[tuple[int, str]], tmp_path: Path
) -> None:
    # The splits are ranked in batches; a batch that fails is asked split by split, so the
    # error names the file at fault rather than the batch.
    path = str(tmp_path / "t")
    df = spark.createDataFrame(docs, "id long, body string")
    for i in range(3):
        part = df.where(F.col("id") % 3 == i).coalesce(1)
        part.write.format(FORMAT).option(TYPEMAP + "body", "text").mode("append").save(path)
    gone = sorted(Path(path).glob("*.split"))[1]
    gone.unlink()
    with pytest.raises(Exception) as e:
        top_of(spark, path, ranking_oracle.lee_queries(50)[0], 3)
    assert "INDEXTABLES_SPLIT_MISSING" in error_text(e.value), error_text(e.value)
    assert gone.name in error_text(e.value)

"""Ranked search on a companion index over a Delta table, as on any IndexTables table.

The Lee corpus (gensim's test data, 300 documents) is written to a Delta table by delta-spark in
ten commits, and indexed with `BUILD INDEXTABLES COMPANION FOR DELTA ... INDEXING MODES (body:
'text')`. Its `_score` and its pushed top 10 must equal PyPI `tantivy`'s over the same documents
in one index (`tests/ranking_oracle.py`), within 1e-4 relative, as they do for the tables
`tests/test_ranked_search.py` writes. After a Delta DELETE with deletion vectors and a sync, no
deleted row is ranked, and the others keep their scores: the deleted docs stay in the split (and
its statistics) under a vector, as tantivy's own deleted docs do until a merge.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import delta_oracle
import ranking_oracle
from helpers import read_table, scan_node
from indextables.functions import indexquery, score

pytestmark = pytest.mark.skipif(
    not (delta_oracle.is_installed() and ranking_oracle.is_installed()),
    reason="build/package.sh puts Delta Lake's JARs in place and installs gensim and tantivy",
)

COMMITS = 10
K = 10


@pytest.fixture(scope="module")
def lake(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root: Path = tmp_path_factory.mktemp("ranked-delta")
    source, index = str(root / "lee"), str(root / "index")
    docs = spark.createDataFrame(ranking_oracle.lee_documents(), "id long, body string")
    table = delta_oracle.DeltaTable.create(
        spark, source, docs.where(F.col("id") % COMMITS == 0).coalesce(1)
    )
    for i in range(1, COMMITS):
        table.append(docs.where(F.col("id") % COMMITS == i).coalesce(1))
    spark.sql(
        f"BUILD INDEXTABLES COMPANION FOR DELTA '{source}' AT LOCATION '{index}' "
        "INDEXING MODES (body: 'text')"
    ).collect()
    return {"source": source, "index": index}


def _top(spark: SparkSession, index: str, query: str) -> list[tuple[int, float]]:
    df = (
        read_table(spark, index)
        .filter(indexquery("body", query))
        .orderBy(score().desc())
        .limit(K)
        .select("id", "_score")
    )
    assert "PushedTopN" in scan_node(df), "the top-k is not pushed"
    return [(int(r["id"]), float(r["_score"])) for r in df.collect()]


def test_scores_and_top_10_equal_tantivys_over_one_index(
    spark: SparkSession, lake: dict[str, str]
) -> None:
    oracle = ranking_oracle.lee_oracle()
    for query in ranking_oracle.lee_queries(50)[:20]:
        rows = (
            read_table(spark, lake["index"])
            .filter(indexquery("body", query))
            .select("id", "_score")
            .collect()
        )
        ours = {int(r["id"]): float(r["_score"]) for r in rows}
        theirs = oracle.scores(query)
        assert set(ours) == set(theirs), f"{query}: matched ids differ"
        for i, s in ours.items():
            assert ranking_oracle.relative_close(s, theirs[i]), f"{query}: id {i}: {s}, {theirs[i]}"
        top = _top(spark, lake["index"], query)
        expected = oracle.top(query, K)
        assert len(top) == len(expected), query
        for (i, s), (_, t) in zip(top, expected):
            assert ranking_oracle.relative_close(s, t), f"{query}: {s} where tantivy has {t}"
            assert ranking_oracle.relative_close(s, theirs[i]), f"{query}: id {i} scored {s}"


def test_rows_delta_deleted_are_never_ranked(spark: SparkSession, lake: dict[str, str]) -> None:
    oracle = ranking_oracle.lee_oracle()
    queries = ranking_oracle.lee_queries(50)[20:30]
    # Delete, through Delta, every row some query ranks first: each query must then rank
    # without it.
    firsts = sorted({oracle.top(q, 1)[0][0] for q in queries})
    table = delta_oracle.DeltaTable(spark, lake["source"])
    table.sql("DELETE FROM {table} WHERE id IN (" + ", ".join(map(str, firsts)) + ")")
    _, metrics = table.last_operation()
    assert delta_oracle.DeltaTable.deletion_vectors_in(metrics) > 0
    spark.sql(
        f"BUILD INDEXTABLES COMPANION FOR DELTA '{lake['source']}' AT LOCATION '{lake['index']}'"
    ).collect()
    live = {int(r["id"]) for r in table.read().select("id").collect()}
    for query in queries:
        top = _top(spark, lake["index"], query)
        every = oracle.scores(query)
        expected = [(i, s) for i, s in oracle.top(query, K + len(firsts)) if i in live][:K]
        assert [i for i, _ in top] == [i for i, _ in expected] or all(
            ranking_oracle.relative_close(s, t) for (_, s), (_, t) in zip(top, expected)
        ), f"{query}: {top} where tantivy without the deleted rows has {expected}"
        for i, s in top:
            assert i in live, f"{query}: deleted row {i} ranked"
            assert ranking_oracle.relative_close(s, every[i]), f"{query}: id {i} scored {s}"

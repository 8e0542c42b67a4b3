"""The ranking oracle itself (tests/ranking_oracle.py): the Lee corpus, its queries, and PyPI
tantivy's BM25 scores recomputed by hand."""

from __future__ import annotations

import math
import re

import pytest

import ranking_oracle
from ranking_oracle import TantivyOracle, lee_documents, lee_oracle, lee_queries, relative_close

pytestmark = pytest.mark.skipif(
    not ranking_oracle.is_installed(), reason="build/package.sh installs gensim and tantivy"
)

K1 = 1.2
B = 0.75


def _fieldnorm_table() -> list[int]:
    """tantivy's 256 encoded field lengths (Lucene's SmallFloat.byte4ToInt): the length of a
    document's field is stored as the id of the largest of them not above it."""
    free = 24  # 255 - longToInt4(Integer.MAX_VALUE)
    table = []
    for i in range(256):
        if i < free:
            table.append(i)
            continue
        bits, shift = (i - free) & 0x07, ((i - free) >> 3) - 1
        table.append(free + (bits if shift == -1 else (bits | 0x08) << shift))
    return table


FIELDNORMS = _fieldnorm_table()


def _encoded_length(length: int) -> int:
    return max(norm for norm in FIELDNORMS if norm <= length)


def _bm25(term: str) -> dict[int, float]:
    """BM25 as tantivy computes it, of one term over the Lee corpus, by id."""
    tokens = {doc_id: ranking_oracle.tokenize(text) for doc_id, text in lee_documents()}
    n = len(tokens)
    avg_length = sum(len(t) for t in tokens.values()) / n
    matching = {doc_id: t.count(term) for doc_id, t in tokens.items() if term in t}
    df = len(matching)
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    out = {}
    for doc_id, tf in matching.items():
        norm = K1 * (1 - B + B * _encoded_length(len(tokens[doc_id])) / avg_length)
        out[doc_id] = idf * (1 + K1) * tf / (tf + norm)
    return out


def test_documents_are_the_lines_of_the_corpus() -> None:
    lines = ranking_oracle.lee_corpus_path().read_text(encoding="utf-8").splitlines()
    docs = lee_documents()
    assert len(docs) == len(lines) == ranking_oracle.LEE_DOCUMENTS
    assert docs == list(enumerate(lines))
    oracle = lee_oracle()
    assert (oracle.num_docs, oracle.num_segments) == (len(docs), 1)


def test_queries_are_deterministic_and_each_matches_three_documents() -> None:
    queries = lee_queries()
    assert len(queries) == len(set(queries)) == 50
    assert queries == lee_queries()
    assert lee_queries(12) == queries[:12]
    phrases = [q for q in queries if q.startswith('"')]
    ors = [q for q in queries if re.fullmatch(r"\w+ OR \w+", q)]
    assert len(phrases) >= 10 and len(ors) >= 10
    oracle = lee_oracle()
    for query in queries:
        top = oracle.top(query)
        assert oracle.count(query) >= ranking_oracle.MIN_MATCHES, query
        assert top == sorted(top, key=lambda hit: (-hit[1], hit[0])), query
        assert len(top) == min(10, oracle.count(query))
        assert all(score > 0 for _, score in top), query


def test_single_term_scores_are_bm25() -> None:
    oracle = lee_oracle()
    term = next(q for q in lee_queries() if re.fullmatch(r"\w+", q))
    expected = _bm25(term)
    got = oracle.scores(term)
    assert got.keys() == expected.keys()
    for doc_id, score in got.items():
        assert relative_close(score, expected[doc_id]), (term, doc_id, score, expected[doc_id])


def test_boolean_scores_are_sums_of_term_scores() -> None:
    oracle = lee_oracle()
    queries = lee_queries()
    # a OR b: a document matching both scores the sum.
    for query in (q for q in queries if re.fullmatch(r"\w+ OR \w+", q)):
        a, b = query.split(" OR ")
        sa, sb, both = oracle.scores(a), oracle.scores(b), oracle.scores(query)
        assert both.keys() == sa.keys() | sb.keys()
        for doc_id, score in both.items():
            assert relative_close(score, sa.get(doc_id, 0.0) + sb.get(doc_id, 0.0)), query
    # a AND b: the documents of both, and the sum; a AND NOT b: a's documents without b's.
    for query in (q for q in queries if re.fullmatch(r"\w+ AND \w+", q)):
        a, b = query.split(" AND ")
        sa, sb, both = oracle.scores(a), oracle.scores(b), oracle.scores(query)
        assert both.keys() == sa.keys() & sb.keys()
        assert all(relative_close(both[d], sa[d] + sb[d]) for d in both), query
    for query in (q for q in queries if " AND NOT " in q):
        a, b = query.split(" AND NOT ")
        sa, sb, only = oracle.scores(a), oracle.scores(b), oracle.scores(query)
        assert only == {d: s for d, s in sa.items() if d not in sb}, query
        assert len(only) < len(sa)


def test_ties_go_to_the_smaller_id_and_relative_close() -> None:
    oracle = TantivyOracle([(7, "same words"), (2, "same words"), (5, "other words")])
    assert [doc_id for doc_id, _ in oracle.top("same", k=2)] == [2, 7]
    assert oracle.count("words") == 3
    assert oracle.top("absent") == []
    assert relative_close(1.0, 1.00005) and not relative_close(1.0, 1.001)
    assert relative_close(0.0, 0.0) and not relative_close(0.0, 1e-9)

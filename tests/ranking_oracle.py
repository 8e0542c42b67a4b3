"""PyPI tantivy 0.27.0 over the Lee corpus as the oracle of ranked search (`_score`).

The Lee corpus is gensim's bundled test data (gensim/test/test_data/lee_background.cor): 300
short news articles, one per line. `TantivyOracle` indexes documents like these in one PyPI
`tantivy` index in RAM (an integer `id`, a `body` text field with the "default" tokenizer and
positions), in one segment, and answers a query string with the BM25 scores tantivy gives it;
a test compares IndexTables' `_score` column for the same query with them:

    oracle = ranking_oracle.lee_oracle()
    for query in ranking_oracle.lee_queries():
        expected = oracle.scores(query)          # {id: score} of every matching document
        ...                                      # relative_close(ours[id], expected[id])

`lee_queries` makes queries whose meaning does not depend on the query parser's default
operator (IndexTables parses with AND, PyPI tantivy with OR): single terms, `a OR b`,
`a AND b`, `a OR b OR c`, `(a OR b) AND c`, two-word phrases and `a AND NOT b`.

build/package.sh installs gensim and tantivy (pinned) into .venv; where either is missing, this
module still imports, `is_installed()` is False and `lee_documents()` raises, saying so.
"""

from __future__ import annotations

import functools
import importlib.util
import math
import random
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import tantivy

__all__ = [
    "LEE_DOCUMENTS",
    "LEE_QUERY_SEED",
    "TantivyOracle",
    "is_installed",
    "lee_corpus_path",
    "lee_documents",
    "lee_oracle",
    "lee_queries",
    "relative_close",
    "tantivy_syntax",
    "tokenize",
]

LEE_DOCUMENTS = 300
"""The number of documents (lines) of lee_background.cor in gensim 4.4.0."""
LEE_QUERY_SEED = 20240611
"""The seed of `lee_queries`' random choices."""
MIN_MATCHES = 3
"""A query `lee_queries` keeps matches at least this many documents."""
MAX_DF_SHARE = 0.4
"""A query term occurs in at least 2 documents and at most this share of them."""
MIN_TERM_LEN = 4
MAX_TERM_LEN = 39
"""tantivy's default tokenizer drops tokens of 40 bytes or more (RemoveLongFilter)."""
INSTALL_HINT = "build/package.sh installs gensim and tantivy into .venv"

# tantivy's "default" tokenizer: SimpleTokenizer (runs of alphanumeric characters), then
# RemoveLongFilter(40), then LowerCaser. `[^\W_]` is a Unicode letter or digit (Python's \w
# less the underscore); for the ASCII text of the Lee corpus the two agree exactly.
_TOKEN = re.compile(r"[^\W_]+")
_TERM = re.compile(r"[a-z]+")
_AND_NOT = re.compile(r"\bAND\s+NOT\s+")

# Query shapes, one after the other (n=50: 15 phrases, 10 `a OR b`, 5 of each of the rest).
_KINDS = ("term", "or", "phrase", "and", "or3", "phrase", "or_and", "and_not", "or", "phrase")
_MAX_ATTEMPTS = 10_000


def is_installed() -> bool:
    """Whether gensim (the corpus) and tantivy (the scorer) are both importable."""
    return all(importlib.util.find_spec(name) is not None for name in ("gensim", "tantivy"))


def lee_corpus_path() -> Path:
    """gensim's lee_background.cor, found in gensim's package folder (gensim itself is not
    imported: it loads numpy and scipy); raises, saying how to get it, when absent."""
    spec = importlib.util.find_spec("gensim")
    if spec is None or spec.origin is None:
        raise RuntimeError(
            f"the Lee corpus comes with gensim, which is not installed; {INSTALL_HINT}"
        )
    path = Path(spec.origin).parent / "test" / "test_data" / "lee_background.cor"
    if not path.is_file():
        raise RuntimeError(f"gensim has no {path}; {INSTALL_HINT} (gensim==4.4.0)")
    return path


def lee_documents() -> list[tuple[int, str]]:
    """The Lee corpus as (id, text): one document per line of lee_background.cor, the id its line
    number from 0, nothing skipped: 300 documents (LEE_DOCUMENTS) of about 60,000 tokens."""
    return list(_lee_documents())


@functools.lru_cache(maxsize=1)
def _lee_documents() -> tuple[tuple[int, str], ...]:
    lines = lee_corpus_path().read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return tuple(enumerate(lines))


@functools.lru_cache(maxsize=1)
def lee_oracle() -> TantivyOracle:
    """One `TantivyOracle` over `lee_documents()`, built once per process."""
    return TantivyOracle(lee_documents())


def tokenize(text: str) -> list[str]:
    """The terms tantivy's "default" tokenizer makes of text, in order (exact for ASCII text)."""
    return [t for t in _TOKEN.findall(text.lower()) if len(t.encode("utf-8")) <= MAX_TERM_LEN]


def tantivy_syntax(query: str) -> str:
    """query as PyPI tantivy 0.27.0's parser reads it the way IndexTables' does: `a AND NOT b`
    written `a AND -b`. That parser makes `NOT b` after an AND a nested query of one must-not
    clause, which matches no document, so `a AND NOT b` would match nothing; `a AND -b` is a
    must `a` and a must-not `b`, the query meant (b adds nothing to the score)."""
    return _AND_NOT.sub("AND -", query)


def relative_close(a: float, b: float, tol: float = 1e-4) -> bool:
    """Whether a and b differ by at most tol relative to the larger of the two."""
    return math.isclose(a, b, rel_tol=tol, abs_tol=0.0)


class TantivyOracle:
    """One PyPI tantivy index in RAM over (id, text) documents, and the BM25 scores of queries.

    Schema: `id_field` an integer (stored, fast, indexed), `field` a stored text field with the
    "default" tokenizer and positions. One writer of one thread adds every document and commits
    once, so the index has one segment (`num_segments`) unless the documents outgrow the
    writer's memory; BM25 uses index-wide statistics either way. Queries are parsed with
    `index.parse_query(query, [field])`, whose default operator is OR, after `tantivy_syntax`
    (`a AND NOT b` written `a AND -b`).
    """

    def __init__(self, docs: list[tuple[int, str]], field: str = "body", id_field: str = "id"):
        try:
            import tantivy
        except ImportError as e:
            raise RuntimeError(f"PyPI tantivy is not installed; {INSTALL_HINT}") from e

        self.field = field
        self.id_field = id_field
        builder = tantivy.SchemaBuilder()
        builder.add_integer_field(id_field, stored=True, indexed=True, fast=True)
        builder.add_text_field(
            field, stored=True, tokenizer_name="default", index_option="position"
        )
        self._index = tantivy.Index(builder.build())
        writer = self._index.writer(heap_size=50_000_000, num_threads=1)
        for doc_id, text in docs:
            writer.add_document(tantivy.Document(**{id_field: doc_id, field: text}))
        writer.commit()
        writer.wait_merging_threads()
        self._index.reload()
        self._searcher: tantivy.Searcher = self._index.searcher()

    @property
    def num_docs(self) -> int:
        return self._searcher.num_docs

    @property
    def num_segments(self) -> int:
        return self._searcher.num_segments

    def doc_freq(self, term: str) -> int:
        """The number of documents whose field holds term (an already tokenized term)."""
        return self._searcher.doc_freq(self.field, term)

    def scores(self, query: str) -> dict[int, float]:
        """Every matching document's score, by id."""
        return self._scores(query, conjunction_by_default=False)

    def top(self, query: str, k: int = 10) -> list[tuple[int, float]]:
        """The k best (id, score), best first, ties by ascending id."""
        ranked = sorted(self.scores(query).items(), key=lambda hit: (-hit[1], hit[0]))
        return ranked[:k]

    def count(self, query: str) -> int:
        """The number of matching documents."""
        return len(self.scores(query))

    def _scores(self, query: str, conjunction_by_default: bool) -> dict[int, float]:
        parsed = self._index.parse_query(
            tantivy_syntax(query), [self.field], conjunction_by_default=conjunction_by_default
        )
        # Every match: the index is small, and ties at the k-th score need all of them.
        hits = self._searcher.search(parsed, limit=max(1, self.num_docs), count=False).hits
        ids = self._searcher.fast_field_values(self.id_field, [address for _, address in hits])
        out: dict[int, float] = {}
        for (score, _), doc_id in zip(hits, ids):
            if not isinstance(doc_id, int) or doc_id in out:
                raise RuntimeError(f"document id {doc_id!r} is missing or not unique")
            out[doc_id] = float(score)
        return out


def lee_queries(n: int = 50) -> list[str]:
    """n distinct queries over the Lee corpus, the same on every call (`random.Random` seeded
    with LEE_QUERY_SEED), each matching at least 3 documents of `lee_oracle()`.

    Shapes, in turn (n=50: 15 phrases, 10 `a OR b`, 5 of each other shape): `a`, `a OR b`,
    `"a b"`, `a AND b`, `a OR b OR c`, `"a b"`, `(a OR b) AND c`, `a AND NOT b`, `a OR b`,
    `"a b"`. Terms are words of at least 4 ASCII letters (no digits: another parser may read a
    number otherwise) found in 2 to 40% of the documents, half of them drawn uniformly from that
    vocabulary (mostly rare words) and half by picking a word occurrence of a random document
    (mostly common ones); the terms of an AND occur together in some document, and a phrase is
    two such words next to each other, separated by one space, in some document. A query is kept
    only where tantivy gives it the same scores with AND and with OR as the default operator.
    """
    return list(_lee_queries(n))


@functools.lru_cache(maxsize=8)
def _lee_queries(n: int) -> tuple[str, ...]:
    oracle = lee_oracle()
    maker = _QueryMaker(lee_documents(), oracle, random.Random(LEE_QUERY_SEED))
    queries: list[str] = []
    for i in range(n):
        kind = _KINDS[i % len(_KINDS)]
        for _ in range(_MAX_ATTEMPTS):
            query = maker.make(kind)
            if query is None or query in queries:
                continue
            scores = oracle.scores(query)
            if len(scores) < MIN_MATCHES:
                continue
            if oracle._scores(query, conjunction_by_default=True) != scores:
                continue
            queries.append(query)
            break
        else:
            raise RuntimeError(f"no {kind} query matching {MIN_MATCHES} documents found")
    return tuple(queries)


class _QueryMaker:
    def __init__(
        self, docs: Iterable[tuple[int, str]], oracle: TantivyOracle, rng: random.Random
    ) -> None:
        self.rng = rng
        self.oracle = oracle
        texts = [text.lower() for _, text in docs]
        tokens = [tokenize(text) for text in texts]
        doc_count = len(texts)
        postings: dict[str, list[int]] = {}
        for doc, terms in enumerate(tokens):
            for term in sorted(set(terms)):
                postings.setdefault(term, []).append(doc)
        self.postings = {
            term: docs_of
            for term, docs_of in sorted(postings.items())
            if _TERM.fullmatch(term)
            and MIN_TERM_LEN <= len(term) <= MAX_TERM_LEN
            and 2 <= len(docs_of) <= MAX_DF_SHARE * doc_count
        }
        self.vocabulary = list(self.postings)
        # Per document: its eligible term occurrences, in order, and its phrases.
        self.occurrences = [[t for t in terms if t in self.postings] for terms in tokens]
        self.phrases = [self._phrases(text) for text in texts]

    def _phrases(self, text: str) -> list[tuple[str, str]]:
        found = list(_TOKEN.finditer(text))
        return [
            (a.group(), b.group())
            for a, b in zip(found, found[1:])
            if text[a.end() : b.start()] == " "
            and a.group() in self.postings
            and b.group() in self.postings
        ]

    def rare(self) -> str:
        return self.rng.choice(self.vocabulary)

    def common(self) -> str:
        while True:
            occurrences = self.rng.choice(self.occurrences)
            if occurrences:
                return self.rng.choice(occurrences)

    def pick(self) -> str:
        return self.rare() if self.rng.random() < 0.5 else self.common()

    def cooccurring(self, term: str) -> str | None:
        """Another term of a random document that holds term."""
        doc = self.rng.choice(self.postings[term])
        others = sorted(set(self.occurrences[doc]) - {term})
        return self.rng.choice(others) if others else None

    def make(self, kind: str) -> str | None:
        if kind == "term":
            return self.pick()
        if kind == "or":
            a, b = self.pick(), self.pick()
            return f"{a} OR {b}" if a != b else None
        if kind == "or3":
            a, b, c = self.pick(), self.pick(), self.pick()
            return f"{a} OR {b} OR {c}" if len({a, b, c}) == 3 else None
        if kind == "phrase":
            phrases = self.rng.choice(self.phrases)
            if not phrases:
                return None
            a, b = self.rng.choice(phrases)
            return f'"{a} {b}"'
        if kind == "and":
            term = self.pick()
            other = self.cooccurring(term)
            return f"{term} AND {other}" if other else None
        if kind == "or_and":
            term = self.pick()
            first, second = self.cooccurring(term), self.cooccurring(term)
            return (
                f"({first} OR {second}) AND {term}"
                if first and second and first != second
                else None
            )
        if kind == "and_not":
            term = self.common()
            other = self.cooccurring(term)
            # NOT removes something: other occurs in some document of term.
            return f"{term} AND NOT {other}" if other else None
        raise ValueError(f"unknown query kind {kind!r}")

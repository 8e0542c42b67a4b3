"""`indextables_snippet` / `indextables.functions.snippet`: highlights, as Elasticsearch's.

On an IndexTables table with a `default`-tokenized text column (body) and an `en_stem` one
(stem), for each query: the rows `col indexquery q` matches are exactly the rows that get a
snippet, and every mark is one token that a positive clause of the query names, compared as the
column's tokenizer cuts it (PyPI tantivy's analyzers: lower-cased alphanumerics, plus English
stemming for en_stem); a phrase marks its occurrences only. Then tags, the length limit, the
whole value, HTML escaping, NULL, columns that are not IndexTables', and the analysis errors.
"""

from __future__ import annotations

import fnmatch
import random
import re

import pytest
import tantivy
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from helpers import TYPEMAP, error_text, read_table, write_table
from indextables.functions import indexquery, snippet

TOKENIZER = "spark.indextables.indexing.tokenizer."
VIEW = "snippet_docs"

_DEFAULT = (
    tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
    .filter(tantivy.Filter.lowercase())
    .build()
)
_EN_STEM = (
    tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
    .filter(tantivy.Filter.lowercase())
    .filter(tantivy.Filter.stemmer("english"))
    .build()
)
ANALYZERS = {"body": _DEFAULT, "stem": _EN_STEM}

WORDS = ["quick", "brown", "fox", "lazy", "dog", "runs", "running", "runner", "jumped", "jumps"]
_MARK = re.compile(r"<b>(.*?)</b>", re.S)


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(3, 14))]
    if rng.random() < 0.3:
        at = rng.randrange(len(words))
        words[at:at] = ["quick", "brown", "fox"]
    text = " ".join(w.upper() if rng.random() < 0.15 else w for w in words)
    return text.replace(" ", rng.choice([" ", ", ", "; "]), 2) + rng.choice([".", "!", ""])


@pytest.fixture(scope="module")
def docs(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> DataFrame:
    rng = random.Random(7)
    rows = [
        (i, None if i % 17 == 0 else _sentence(rng), _sentence(rng), i % 10, f"tag{i % 3}")
        for i in range(80)
    ]
    rows.append((1000, "the brown dog; a quick brown fox; brown again", "he runs", 1, "tag0"))
    df = spark.createDataFrame(rows, "id long, body string, stem string, n int, tag string")
    path = str(tmp_path_factory.mktemp("snippets") / "t")
    write_table(
        df.repartition(2),
        path,
        options={TYPEMAP + "body": "text", TOKENIZER + "stem": "en_stem"},
    )
    table = read_table(spark, path)
    table.createOrReplaceTempView(VIEW)
    return table


def _quote(query: str) -> str:
    return query.replace("\\", "\\\\").replace("'", "\\'")


def _snippets(spark: SparkSession, column: str, query: str) -> dict[int, str | None]:
    rows = spark.sql(
        f"SELECT id, indextables_snippet({column}, '{_quote(query)}') AS s FROM {VIEW}"
    ).collect()
    return {r.id: r.s for r in rows}


def _matched(spark: SparkSession, column: str, query: str) -> set[int]:
    """The ids the index matches for `column indexquery query`; at least one."""
    matched = {
        r.id
        for r in spark.sql(
            f"SELECT id FROM {VIEW} WHERE {column} indexquery '{_quote(query)}'"
        ).collect()
    }
    assert matched, f"{query} matches no row: the case tests nothing"
    return matched


def _terms(column: str, text: str) -> list[str]:
    return list(ANALYZERS[column].analyze(text))


# (column, query, the words whose terms may be marked, the phrase if the query is one)
CASES: list[tuple[str, str, list[str], list[str] | None]] = [
    ("body", "fox", ["fox"], None),
    ("body", "FOX", ["fox"], None),
    ("body", "quick OR lazy", ["quick", "lazy"], None),
    ("body", "quick AND dog", ["quick", "dog"], None),
    ("body", "fox AND NOT lazy", ["fox"], None),
    ("body", "running", ["running"], None),
    ("body", '"quick brown"', ["quick", "brown"], ["quick", "brown"]),
    ("body", '"Brown Fox"', ["brown", "fox"], ["brown", "fox"]),
    ("body", "fox AND n:[0 TO 4]", ["fox"], None),
    ("stem", "running", ["running"], None),
    ("stem", "RUNS", ["runs"], None),
    ("stem", "jumping OR lazy", ["jumping", "lazy"], None),
    ("stem", '"quick running"', ["quick", "running"], ["quick", "running"]),
]


@pytest.mark.parametrize(("column", "query", "allowed", "phrase"), CASES)
def test_matched_rows_get_snippets_marking_what_matched(
    spark: SparkSession,
    docs: DataFrame,
    column: str,
    query: str,
    allowed: list[str],
    phrase: list[str] | None,
) -> None:
    matched = _matched(spark, column, query)
    snippets = _snippets(spark, column, query)
    values = {r.id: r[column] for r in docs.select("id", column).collect()}
    highlighted = {i for i, s in snippets.items() if s is not None}
    if ":" in query and not query.startswith(f"{column}:"):
        # A clause on another field is the index's to decide: it marks nothing and restricts
        # nothing here, so the rows of the column's own clauses get snippets.
        assert matched <= highlighted
        matched = highlighted
    assert highlighted == matched
    allowed_terms = {t for w in allowed for t in _terms(column, w)}
    for i in matched:
        s = snippets[i]
        assert s is not None
        assert s.replace("<b>", "").replace("</b>", "") in values[i], (s, values[i])
        marks = _MARK.findall(s)
        assert marks, s
        for mark in marks:
            assert len(_terms(column, mark)) == 1 and _terms(column, mark)[0] in allowed_terms, (
                f"{query}: {mark!r} marked in {s!r}"
            )
        if phrase is not None:
            _assert_phrase_runs(column, s, [_terms(column, w)[0] for w in phrase])


# (column, query, its wildcard patterns, its plain words): every row the wildcard matches gets
# a fragment, and what is marked is a term the pattern (lower-cased, as the index matches it)
# matches as a whole, or one of the plain words.
WILDCARD_CASES: list[tuple[str, str, list[str], list[str]]] = [
    ("body", "ru*", ["ru*"], []),
    ("body", "JUMP?", ["jump?"], []),
    ("body", "qu*k OR lazy", ["qu*k"], ["lazy"]),
    ("body", "fo* AND NOT dog", ["fo*"], []),
    ("stem", "run*", ["run*"], []),
]


@pytest.mark.parametrize(("column", "query", "patterns", "words"), WILDCARD_CASES)
def test_wildcards_mark_the_terms_they_matched(
    spark: SparkSession,
    docs: DataFrame,
    column: str,
    query: str,
    patterns: list[str],
    words: list[str],
) -> None:
    matched = _matched(spark, column, query)
    snippets = _snippets(spark, column, query)
    assert {i for i, s in snippets.items() if s is not None} == matched
    plain = {t for w in words for t in _terms(column, w)}
    for i in matched:
        for mark in _MARK.findall(snippets[i] or ""):
            (term,) = _terms(column, mark)
            assert term in plain or any(fnmatch.fnmatchcase(term, p) for p in patterns), (
                f"{query}: {mark!r} marked in {snippets[i]!r}"
            )


def _assert_phrase_runs(column: str, s: str, phrase: list[str]) -> None:
    """Every marked token of s stands in a run of marked tokens that is the phrase, repeated."""
    tokens: list[tuple[str, bool]] = []
    for part, marked in _split_marks(s):
        tokens += [(t, marked) for t in _terms(column, part)]
    run: list[str] = []
    for term, marked in [*tokens, ("", False)]:
        if marked:
            run.append(term)
        elif run:
            assert len(run) % len(phrase) == 0 and run == phrase * (len(run) // len(phrase)), (
                f"marked {run} in {s!r}, not the phrase {phrase}"
            )
            run = []


def _split_marks(s: str) -> list[tuple[str, bool]]:
    parts: list[tuple[str, bool]] = []
    at = 0
    for m in _MARK.finditer(s):
        parts += [(s[at : m.start()], False), (m.group(1), True)]
        at = m.end()
    return [*parts, (s[at:], False)]


def test_a_phrase_marks_its_occurrence_not_its_words_elsewhere(
    spark: SparkSession, docs: DataFrame
) -> None:
    assert _snippets(spark, "body", '"brown fox"')[1000] == (
        "the brown dog; a quick <b>brown</b> <b>fox</b>; brown again"
    )
    # tantivy's own SnippetGenerator would mark every "brown"; a plain term does.
    assert _snippets(spark, "body", "brown")[1000] == (
        "the <b>brown</b> dog; a quick <b>brown</b> fox; <b>brown</b> again"
    )
    # A stemmed phrase, through an alias: the column's tokenizer follows it to the table.
    row = spark.sql(
        f"SELECT indextables_snippet(s, '\"he running\"') AS h FROM "
        f"(SELECT id, stem AS s FROM {VIEW}) WHERE id = 1000"
    ).first()
    assert row is not None and row.h == "<b>he</b> <b>runs</b>"


def test_tags_length_whole_value_and_html(spark: SparkSession, docs: DataFrame) -> None:
    long_text = "word " * 60 + "needle & <b>" + " more" * 60
    rows = spark.createDataFrame([(1, long_text), (2, None)], "id int, v string")
    rows.createOrReplaceTempView("snippet_plain")
    got = spark.sql(
        "SELECT id, indextables_snippet(v, 'needle', '[[', ']]') AS tags, "
        "indextables_snippet(v, 'needle', '<em>', '</em>', 40) AS short, "
        "indextables_snippet(v, 'needle', '<b>', '</b>', 0) AS whole, "
        "indextables_snippet(v, 'needle', '<em>', '</em>', 30, 'html') AS html "
        "FROM snippet_plain ORDER BY id"
    ).collect()
    first, null_row = got
    assert "[[needle]]" in first.tags and len(first.tags) - 4 <= 150
    assert "<em>needle</em>" in first.short
    assert len(first.short.replace("<em>", "").replace("</em>", "")) <= 40
    assert first.whole.replace("<b>needle</b>", "needle") == long_text
    assert "<em>needle</em> &amp; &lt;b&gt;" in first.html
    assert null_row.tags is None and null_row.short is None and null_row.html is None
    # Nothing matched: NULL, as Elasticsearch returns no fragment.
    none = spark.sql("SELECT indextables_snippet(v, 'absent') AS s FROM snippet_plain").collect()
    assert [r.s for r in none] == [None, None]


def test_the_python_function_is_the_sql_one(spark: SparkSession, docs: DataFrame) -> None:
    py = (
        docs.filter(indexquery("stem", "running"))
        .select("id", snippet("stem", "running", "<i>", "</i>", 50).alias("s"))
        .collect()
    )
    sql = spark.sql(
        f"SELECT id, indextables_snippet(stem, 'running', '<i>', '</i>', 50) AS s FROM {VIEW} "
        "WHERE stem indexquery 'running'"
    ).collect()
    assert sorted(py) == sorted(sql) and py
    assert all("<i>" in r.s for r in py)
    with pytest.raises(TypeError, match="query must be a str"):
        snippet("stem", 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="max_chars must be an int"):
        snippet("stem", "x", max_chars="9")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("select", "error_class", "names"),
    [
        ("indextables_snippet(n, 'x')", "INDEXTABLES_SNIPPET_NOT_STRING", "n"),
        ("indextables_snippet(body, 'body:((')", "INDEXTABLES_INVALID_INDEXQUERY", "body:(("),
        ("indextables_snippet(body, tag)", "INDEXTABLES_SNIPPET_ARGUMENTS", "tag"),
        ("indextables_snippet(body, 'x', '<b>')", "INDEXTABLES_SNIPPET_ARGUMENTS", "3"),
        ("indextables_snippet(body, 'x', '<', '>', -1)", "INDEXTABLES_SNIPPET_ARGUMENTS", "-1"),
        (
            "indextables_snippet(body, 'x', '<', '>', 9, 'xml')",
            "INDEXTABLES_SNIPPET_ARGUMENTS",
            "xml",
        ),
        ("indextables_snippet(body, 'nosuchfield:x')", "INDEXTABLES_INVALID_INDEXQUERY", "nosuch"),
    ],
)
def test_bad_calls_fail_analysis_naming_the_fault(
    spark: SparkSession, docs: DataFrame, select: str, error_class: str, names: str
) -> None:
    with pytest.raises(Exception) as info:
        spark.sql(f"SELECT {select} FROM {VIEW}")  # analysis only: nothing runs
    text = error_text(info.value)
    assert error_class in text and names in text, text
    assert "panicked" not in text and "native ranker" not in text, text


def test_a_value_not_read_from_indextables_is_cut_by_the_default_tokenizer(
    spark: SparkSession,
) -> None:
    plain = spark.createDataFrame([("He RUNS; running.",)], "v string")
    got = plain.select(snippet("v", "running").alias("s")).first()
    assert got is not None and got.s == "He RUNS; <b>running</b>."
    assert plain.select(snippet(F.upper("v"), "runs").alias("s")).first() == (
        ("HE <b>RUNS</b>; RUNNING.",)
    )

"""IndexQuery predicates (for ``df.filter``), bucket functions and highlights as Columns.

Each function builds a call of the SQL function the plugin's extensions register (the same one
the SQL operators are rewritten to), so a Column here and the SQL form are one expression: the
optimizer pushes it into the IndexTables scan the same way (EXPLAIN shows ``PushedIndexQuery``)
and it has the same semantics (TRUE or FALSE, never null). They compose with ``&``, ``|`` and
``~`` and with ordinary Column predicates::

    from indextables.functions import indexquery
    df.filter(indexquery("message", "timeout OR reset") & (df.level == "ERROR"))

The query is a tantivy query string and must be a Python ``str``: it is passed as a literal,
as SQL requires. The session must have the plugin's extensions (``configure_spark``).

Bucket functions for GROUP BY:

Each calls the SQL function of the same name that the IndexTables session extensions register
(``spark.sql.extensions=io.indextables.spark.extensions.IndexTables4SparkExtensions``, which
``indextables.configure_spark`` sets), so they work on any DataFrame of that session: over an
IndexTables table, ``df.groupBy(indextables_date_histogram("ts", "1h")).count()`` is answered by
the splits' own aggregations; over anything else Spark computes the same buckets row by row.

- ``indextables_histogram(col, interval, offset=0.0)``: ``floor((col - offset) / interval) *
  interval + offset``, a DOUBLE.
- ``indextables_date_histogram(col, interval, offset=None)``: the start, in UTC, of the fixed
  interval (``"30m"``, ``"1h"``, ``"1d"``; units ms, s, m, h, d) a TIMESTAMP falls into.
- ``indextables_range(col, ranges)``: the name of the range ``[from, to)`` a number falls into
  (``None`` bounds are unbounded), or NULL.

A NULL value gets the NULL bucket. Bad arguments fail analysis with error class
``INDEXTABLES_BUCKET_FUNCTION_ARGUMENTS``.

Highlights, for SELECT (docs/highlights.md):

- ``snippet(col, query, pre_tag="<b>", post_tag="</b>", max_chars=150, encoder="default")``:
  the best fragment of a string column with what the query matched in it marked, or NULL when
  nothing of it matched; SQL ``indextables_snippet``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final, Union

from pyspark.sql import Column
from pyspark.sql import functions as F

from indextables._connect import is_classic_or_connect

__all__ = [
    "fieldmatch",
    "indexquery",
    "indexquery_all",
    "indextables_date_histogram",
    "indextables_histogram",
    "indextables_range",
    "score",
    "snippet",
    "textsearch",
]

ColumnOrName = Union[Column, str]
Bound = Union[int, float, None]
"""A Column, or the name of one."""

# The SQL functions the extensions register (jvm: expressions/IndexQueryFunctions).
INDEXQUERY_FUNCTION: Final[str] = "tantivy4spark_indexquery"
INDEXQUERY_ALL_FUNCTION: Final[str] = "tantivy4spark_indexqueryall"
TEXTSEARCH_FUNCTION: Final[str] = "tantivy4spark_textsearch"
FIELDMATCH_FUNCTION: Final[str] = "tantivy4spark_fieldmatch"
SNIPPET_FUNCTION: Final[str] = "indextables_snippet"


def indexquery(col: ColumnOrName, query: str) -> Column:
    """TRUE where the tantivy `query` matches, with `col` as its default field.

    The query may name other fields of the same table (``level:ERROR AND timeout``). SQL:
    ``col indexquery 'query'``.
    """
    return _column_call(INDEXQUERY_FUNCTION, "indexquery", col, query)


def indexquery_all(query: str) -> Column:
    """TRUE where the tantivy `query` matches any string or text field of the one table in the
    filter. SQL: ``indexqueryall('query')``."""
    return F.call_function(INDEXQUERY_ALL_FUNCTION, F.lit(_query("indexquery_all", query)))


def textsearch(col: ColumnOrName, query: str) -> Column:
    """As :func:`indexquery`, but `col` must be a tokenized (``text``) column: a full-text
    search of it. SQL: ``col textsearch 'query'``."""
    return _column_call(TEXTSEARCH_FUNCTION, "textsearch", col, query)


def fieldmatch(col: ColumnOrName, query: str) -> Column:
    """As :func:`indexquery`, but `col` must be an exact (not tokenized) column: its terms
    match whole values. SQL: ``col fieldmatch 'query'``."""
    return _column_call(FIELDMATCH_FUNCTION, "fieldmatch", col, query)


def score() -> Column:
    """The row's ``_score``: its BM25 relevance to the query's IndexQuery clauses, computed with
    the whole table's statistics (NULL where no such clause matched the row, or the query has
    none). Order by it, descending, with a LIMIT, and the top-k is pushed down::

        df.filter(indexquery("message", "timeout OR reset")).orderBy(score().desc()).limit(10)

    SQL: the hidden column ``_score`` (``SELECT *, _score ... ORDER BY _score DESC LIMIT 10``).
    """
    return F.col("_score")


def snippet(
    col: ColumnOrName,
    query: str,
    pre_tag: str = "<b>",
    post_tag: str = "</b>",
    max_chars: int = 150,
    encoder: str = "default",
) -> Column:
    """The best fragment of the string column `col` with what the tantivy `query` matched in it
    between `pre_tag` and `post_tag`, as Elasticsearch's highlighter returns it: NULL when
    nothing of the value matched (or it is NULL).

    The fragment has at most `max_chars` characters (0: the whole value). Marked is exactly what
    matched, cut as the column is indexed (an ``en_stem`` column's ``running`` marks ``runs``):
    a phrase's occurrences, not its words elsewhere; not a ``NOT`` clause's terms. The text is
    returned as it is, unless `encoder` is ``"html"``: then it is HTML-escaped (not the tags).
    SQL: ``indextables_snippet(col, 'query', '<b>', '</b>', 150, 'default')``.

    >>> df.filter(indexquery("message", "timeout")).select(snippet("message", "timeout"))
    """
    if not isinstance(max_chars, int) or isinstance(max_chars, bool):
        raise TypeError(f"snippet: max_chars must be an int, got {type(max_chars).__name__}")
    for name, value in (("pre_tag", pre_tag), ("post_tag", post_tag), ("encoder", encoder)):
        if not isinstance(value, str):
            raise TypeError(f"snippet: {name} must be a str, got {type(value).__name__}")
    return F.call_function(
        SNIPPET_FUNCTION,
        _as_column("snippet", col),
        F.lit(_query("snippet", query)),
        F.lit(pre_tag),
        F.lit(post_tag),
        F.lit(max_chars),
        F.lit(encoder),
    )


def _column_call(function: str, name: str, col: ColumnOrName, query: str) -> Column:
    return F.call_function(function, _as_column(name, col), F.lit(_query(name, query)))


def _as_column(name: str, col: object) -> Column:
    if isinstance(col, str):
        return F.col(col)
    if is_classic_or_connect(col, Column, "pyspark.sql.connect.column"):
        return col  # type: ignore[return-value]
    raise TypeError(
        f"{name}: col must be a Column or a column name (str), got {type(col).__name__}"
    )


def _query(name: str, query: object) -> str:
    if not isinstance(query, str):
        raise TypeError(
            f"{name}: query must be a str (a tantivy query string), got {type(query).__name__}"
        )
    return query


def _column(col: ColumnOrName) -> Column:
    return F.col(col) if isinstance(col, str) else col


def indextables_histogram(col: ColumnOrName, interval: float, offset: float = 0.0) -> Column:
    """The histogram bucket of a numeric column: ``floor((col - offset) / interval) * interval
    + offset`` (a DOUBLE); ``interval`` must be positive.

    >>> df.groupBy(indextables_histogram("latency_ms", 100.0).alias("bucket")).count()
    """
    return F.call_function(
        "indextables_histogram", _column(col), F.lit(float(interval)), F.lit(float(offset))
    )


def indextables_date_histogram(
    col: ColumnOrName, interval: str, offset: str | None = None
) -> Column:
    """The start (UTC) of the fixed interval a TIMESTAMP column's value falls into.

    ``interval`` is written as Elasticsearch's ``fixed_interval``: a count and a unit among
    ``ms``, ``s``, ``m``, ``h``, ``d`` (``"30m"``, ``"1h"``, ``"1d"``); ``offset`` (``"6h"``,
    ``"-30m"``) shifts the buckets' starts.

    >>> df.groupBy(indextables_date_histogram("ts", "1h").alias("hour")).count()
    """
    args = [_column(col), F.lit(interval)]
    if offset is not None:
        args.append(F.lit(offset))
    return F.call_function("indextables_date_histogram", *args)


def indextables_range(col: ColumnOrName, ranges: Sequence[tuple[str, Bound, Bound]]) -> Column:
    """The name of the range ``[from, to)`` a numeric column's value falls into, or NULL.

    ``ranges`` holds ``(name, from, to)`` triples; ``None`` leaves a bound open. Ranges must
    not overlap and names must differ.

    >>> indextables_range("latency_ms", [("fast", None, 100), ("slow", 100, None)])
    """
    if not ranges:
        raise ValueError("indextables_range needs at least one (name, from, to) range")
    args = [_column(col)]
    for name, lo, hi in ranges:
        args += [
            F.lit(name),
            F.lit(None).cast("double") if lo is None else F.lit(float(lo)),
            F.lit(None).cast("double") if hi is None else F.lit(float(hi)),
        ]
    return F.call_function("indextables_range", *args)

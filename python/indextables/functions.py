"""IndexQuery predicates as PySpark Columns, for ``df.filter(...)``.

Each function builds a call of the SQL function the plugin's extensions register (the same one
the SQL operators are rewritten to), so a Column here and the SQL form are one expression: the
optimizer pushes it into the IndexTables scan the same way (EXPLAIN shows ``PushedIndexQuery``)
and it has the same semantics (TRUE or FALSE, never null). They compose with ``&``, ``|`` and
``~`` and with ordinary Column predicates::

    from indextables.functions import indexquery
    df.filter(indexquery("message", "timeout OR reset") & (df.level == "ERROR"))

The query is a tantivy query string and must be a Python ``str``: it is passed as a literal,
as SQL requires. The session must have the plugin's extensions (``configure_spark``).
"""

from __future__ import annotations

from typing import Final, Union

from pyspark.sql import Column
from pyspark.sql import functions as F

__all__ = ["fieldmatch", "indexquery", "indexquery_all", "textsearch"]

ColumnOrName = Union[Column, str]
"""A Column, or the name of one."""

# The SQL functions the extensions register (jvm: expressions/IndexQueryFunctions).
INDEXQUERY_FUNCTION: Final[str] = "tantivy4spark_indexquery"
INDEXQUERY_ALL_FUNCTION: Final[str] = "tantivy4spark_indexqueryall"
TEXTSEARCH_FUNCTION: Final[str] = "tantivy4spark_textsearch"
FIELDMATCH_FUNCTION: Final[str] = "tantivy4spark_fieldmatch"


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


def _column_call(function: str, name: str, col: ColumnOrName, query: str) -> Column:
    if isinstance(col, str):
        column = F.col(col)
    elif isinstance(col, Column):
        column = col
    else:
        raise TypeError(
            f"{name}: col must be a Column or a column name (str), got {type(col).__name__}"
        )
    return F.call_function(function, column, F.lit(_query(name, query)))


def _query(name: str, query: object) -> str:
    if not isinstance(query, str):
        raise TypeError(
            f"{name}: query must be a str (a tantivy query string), got {type(query).__name__}"
        )
    return query

"""Bucket functions for GROUP BY, as PySpark Column functions.

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
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Union

from pyspark.sql import Column
from pyspark.sql import functions as F

__all__ = [
    "indextables_date_histogram",
    "indextables_histogram",
    "indextables_range",
]

ColumnOrName = Union[Column, str]
Bound = Union[int, float, None]


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

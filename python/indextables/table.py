"""`IndexTable`: a handle of one IndexTables table, by path or by catalog name.

Modelled on delta-spark's `DeltaTable`. Every method issues the SQL command that SQL users run
(`DESCRIBE INDEXTABLES HISTORY`, `CHECKPOINT INDEXTABLES`, ...), so the Python API and SQL share
one implementation on the JVM.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import DataFrame, SparkSession

from indextables.exceptions import convert_exception

__all__ = ["IndexTable"]

_TARGETS = "io.indextables.spark.sql.commands.IndexTablesCommandTarget"


class IndexTable:
    """An IndexTables table, named by its path or by its name in the session's catalog.

    >>> table = IndexTable.for_name(spark, "logs")
    >>> table.to_df().filter("message indexquery 'timeout'").count()
    >>> table.history().show()
    """

    def __init__(self, spark: SparkSession, target: str, path: str | None) -> None:
        """Use `for_path` or `for_name`. `target` is how SQL commands name the table."""
        self._spark = spark
        self._target = target
        self._path = path

    @classmethod
    def for_path(cls, spark: SparkSession, path: str) -> IndexTable:
        """The table at `path`.

        Raises `indextables.IndexTablesError` (error class ``INDEXTABLES_TABLE_NOT_FOUND``)
        when `path` holds no IndexTables table.
        """
        if not isinstance(path, str) or not path:
            raise TypeError(f"path must be a non-empty str, got {path!r}")
        target = _resolve(spark, "forPath", path)
        return cls(spark, target, path)

    @classmethod
    def for_name(cls, spark: SparkSession, name: str) -> IndexTable:
        """The table `name` names in the session's catalog (`logs`, `db.logs`, or a view over
        one IndexTables table), as SQL writes it.

        Raises `indextables.IndexTablesError` with error class ``INDEXTABLES_TABLE_NOT_FOUND``
        when no table has that name, and ``INDEXTABLES_COMMAND_TARGET`` when the name is not an
        IndexTables table.
        """
        if not isinstance(name, str) or not name:
            raise TypeError(f"name must be a non-empty str, got {name!r}")
        target = _resolve(spark, "forName", name)
        return cls(spark, target, None)

    @property
    def sql_name(self) -> str:
        """How SQL commands name this table: a quoted path or a quoted multi-part name."""
        return self._target

    def to_df(self) -> DataFrame:
        """The table's latest version as a DataFrame."""
        if self._path is not None:
            return self._spark.read.format("indextables").load(self._path)
        return self._spark.table(self._target)

    def history(self) -> DataFrame:
        """One row per version, newest first (`DESCRIBE INDEXTABLES HISTORY`)."""
        return self._command("DESCRIBE INDEXTABLES HISTORY {table}")

    def describe(self) -> DataFrame:
        """The latest state in one row: version, files, records, size, schema, ...
        (`DESCRIBE INDEXTABLES STATE`)."""
        return self._command("DESCRIBE INDEXTABLES STATE {table}")

    def checkpoint(self) -> int:
        """Writes a checkpoint of the latest version now (`CHECKPOINT INDEXTABLES`); returns
        that version."""
        (row,) = self._command("CHECKPOINT INDEXTABLES {table}").collect()
        return int(row["version"])

    def _command(self, template: str) -> DataFrame:
        """Runs the SQL command `template` with `{table}` standing for this table."""
        try:
            return self._spark.sql(template.format(table=self._target))
        except Exception as error:
            _raise_converted(error)
            raise

    def __repr__(self) -> str:
        return f"IndexTable({self._target})"


def _resolve(spark: SparkSession, method: str, argument: str) -> str:
    """Resolves a path or name on the JVM as the SQL commands do; returns its SQL form."""
    if not isinstance(spark, SparkSession):
        raise TypeError(f"spark must be a pyspark.sql.SparkSession, got {type(spark).__name__}")
    jvm: Any = spark.sparkContext._jvm
    targets: Any = jvm
    for part in _TARGETS.split("."):
        targets = getattr(targets, part)
    try:
        target = getattr(targets, method)(spark._jsparkSession, argument)
    except Exception as error:
        _raise_converted(error)
        raise
    return str(target.sql())


def _raise_converted(error: Exception) -> None:
    """Raises the IndexTablesError that `error` stands for, if it is one of ours."""
    converted = convert_exception(error)
    if converted is not error:
        raise converted from error

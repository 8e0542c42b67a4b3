"""`IndexTable`: a handle of one IndexTables table, by path or by catalog name.

Modelled on delta-spark's `DeltaTable`. Every method issues the SQL command that SQL users run
(`DESCRIBE INDEXTABLES HISTORY`, `CHECKPOINT INDEXTABLES`, ...), so the Python API and SQL share
one implementation on the JVM. Nothing here calls the JVM directly (no py4j): a classic session
and a Spark Connect session (`SparkSession.builder.remote(...)`) are served alike.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from pyspark.sql import DataFrame, Row, SparkSession

from indextables._connect import is_classic_or_connect
from indextables.exceptions import convert_exception

__all__ = ["CompanionStream", "IndexTable"]


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
        return cls(spark, _existing(spark, _quoted(path)), path)

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
        target = ".".join("`" + p.replace("`", "``") + "`" for p in _name_parts(name))
        return cls(spark, _existing(spark, target), None)

    @property
    def sql_name(self) -> str:
        """How SQL commands name this table: a quoted path or a quoted multi-part name."""
        return self._target

    def to_df(self) -> DataFrame:
        """The table's latest version as a DataFrame."""
        if self._path is not None:
            return self._spark.read.format("indextables").load(self._path)
        return self._spark.table(self._target)

    def search(
        self,
        query: str,
        k: int = 10,
        columns: Sequence[str] | None = None,
        where: str | None = None,
        highlight: str | Sequence[str] | None = None,
    ) -> DataFrame:
        """The `k` rows that best match `query`, best first, with their ``_score``.

        `query` is a tantivy query over every string and text field (as ``indexqueryall``;
        ``field:term`` names one). ``_score`` is the row's BM25 score for it, computed with the
        whole table's statistics, so it does not depend on how the table was appended to or
        merged. `columns` are the columns returned before ``_score`` (all by default); `where`
        is a SQL condition the rows must also meet (it selects rows, and adds nothing to a
        score). Ties keep one stable order. The top-k is pushed down: each split returns at
        most `k` rows, and a small `k` is answered on the driver with no Spark job.

        `highlight` names string columns (one, or a sequence) to highlight: each adds a column
        ``<name>_highlight`` after ``_score``, the best fragment of the row's value with what
        `query` matched in it marked ``<b>…</b>`` (`functions.snippet`), NULL where nothing of
        that value matched. Fragments are made for the `k` rows returned only.

        >>> IndexTable.for_path(spark, path).search("timeout OR reset", k=5).show()
        >>> IndexTable.for_path(spark, path).search("timeout", highlight="message").show()
        """
        from pyspark.sql import functions as F

        from indextables.functions import indexquery_all, snippet

        if not isinstance(query, str) or not query.strip():
            raise ValueError(f"query must be a non-empty str, got {query!r}")
        _positive("k", k)
        df = self.to_df().filter(indexquery_all(query))
        if where is not None:
            if not isinstance(where, str):
                raise TypeError(f"where must be a str, got {where!r}")
            df = df.filter(where)
        wanted = list(df.columns) if columns is None else list(columns)
        if isinstance(columns, str) or not all(isinstance(c, str) and c for c in wanted):
            raise TypeError(f"columns must be a sequence of non-empty str, got {columns!r}")
        marked = [highlight] if isinstance(highlight, str) else list(highlight or [])
        if not all(isinstance(c, str) and c for c in marked):
            raise TypeError(
                f"highlight must be a column name or a sequence of them, got {highlight!r}"
            )
        missing = [c for c in marked if c not in df.columns]
        if missing:
            raise ValueError(f"highlight: no column {missing[0]!r} in {df.columns}")
        kept = list(dict.fromkeys(wanted + marked))
        top = df.select(*kept, "_score").orderBy(F.col("_score").desc()).limit(k)
        # The fragments of the winners only: after the limit, where Spark keeps the order.
        return top.select(
            *wanted, "_score", *(snippet(c, query).alias(f"{c}_highlight") for c in marked)
        )

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

    def merge_splits(
        self,
        where: str | None = None,
        target_size: str | int | None = None,
        max_dest_splits: int | None = None,
        max_source_splits_per_merge: int | None = None,
    ) -> DataFrame:
        """Merges small splits, per partition, into splits near `target_size` (bytes, or
        ``"100M"``, ``"5G"``); `where` is a predicate on partition columns
        (`MERGE SPLITS`). Returns the command's one row."""
        clauses = _where(where)
        if target_size is not None:
            if not isinstance(target_size, (str, int)) or isinstance(target_size, bool):
                raise TypeError(f"target_size must be a str or an int, got {target_size!r}")
            clauses += f" TARGET SIZE {_quoted(str(target_size))}"
        if max_dest_splits is not None:
            clauses += f" MAX DEST SPLITS {_positive('max_dest_splits', max_dest_splits)}"
        if max_source_splits_per_merge is not None:
            n = _positive("max_source_splits_per_merge", max_source_splits_per_merge)
            clauses += f" MAX SOURCE SPLITS PER MERGE {n}"
        return self._command("MERGE SPLITS {table}" + clauses)

    def purge(
        self,
        older_than_hours: int | None = None,
        log_retention_hours: int | None = None,
        dry_run: bool = False,
    ) -> DataFrame:
        """Deletes split files no reachable version references, older than the retention, and
        old log files (`PURGE INDEXTABLE`); with `dry_run`, only lists them."""
        clauses = ""
        if older_than_hours is not None:
            clauses += f" OLDER THAN {_non_negative('older_than_hours', older_than_hours)} HOURS"
        if log_retention_hours is not None:
            hours = _non_negative("log_retention_hours", log_retention_hours)
            clauses += f" TRANSACTION LOG RETENTION {hours} HOURS"
        return self._command("PURGE INDEXTABLE {table}" + clauses + _flag(dry_run, " DRY RUN"))

    def drop_partitions(self, where: str) -> DataFrame:
        """Removes, in one commit, the partitions `where` (on partition columns only) is true
        for (`DROP INDEXTABLES PARTITIONS`)."""
        if not isinstance(where, str) or not where.strip():
            raise TypeError(f"where must be a non-empty str, got {where!r}")
        return self._command("DROP INDEXTABLES PARTITIONS FROM {table}" + _where(where))

    def truncate_time_travel(self, dry_run: bool = False) -> DataFrame:
        """Drops the history older than the latest checkpoint (`TRUNCATE INDEXTABLES TIME
        TRAVEL`)."""
        return self._command(
            "TRUNCATE INDEXTABLES TIME TRAVEL {table}" + _flag(dry_run, " DRY RUN")
        )

    def prewarm(
        self,
        segments: Sequence[str] | None = None,
        fields: Sequence[str] | None = None,
        where: str | None = None,
    ) -> DataFrame:
        """Loads index components (term dictionaries and postings by default) into the caches
        of the executors that will read each split (`PREWARM INDEXTABLES CACHE`)."""
        clauses = ""
        if segments:
            clauses += f" FOR SEGMENTS ({_identifiers('segments', segments)})"
        if fields:
            clauses += f" ON FIELDS ({_identifiers('fields', fields)})"
        return self._command("PREWARM INDEXTABLES CACHE {table}" + clauses + _where(where))

    def sync_companion(self, from_version: int | None = None) -> Row:
        """Brings this companion index up to date with its source, a Delta or Iceberg table or a
        folder of Parquet files (`BUILD INDEXTABLES COMPANION FOR DELTA|ICEBERG|PARQUET
        '<source>' AT LOCATION '<this index>'`), with the columns and modes its first build fixed:
        indexes the files that are new, drops the splits of files that are gone, and carries the
        source's deleted rows over. `from_version` syncs to that Delta version, or Iceberg
        snapshot id, instead of the latest. An Iceberg table is found by its location, as a
        Hadoop table: one in another kind of catalog (Hive, REST) is synced by running its
        BUILD ... CATALOG again. Returns the command's one row (status, source_version,
        splits_created, ...).

        Raises `ValueError` when this table is not a companion index of another table's files.
        """
        state = self._companion_state()
        clause = ""
        if from_version is not None:
            kind = "SNAPSHOT" if state["source_format"] == "iceberg" else "VERSION"
            clause = f" FROM {kind} {_non_negative('from_version', from_version)}"
        (row,) = self._command(_companion_build(state) + clause).collect()
        return row

    def stream_companion(self, poll_interval_seconds: int) -> CompanionStream:
        """Keeps this companion index in sync with its source until stopped: the first sync
        now, then one every `poll_interval_seconds` (`BUILD INDEXTABLES COMPANION ... WITH
        STREAMING POLL INTERVAL n SECONDS`, run on a thread of its own). A sync that finds
        nothing new commits nothing. Returns the running stream; stop it with `stop()`, or use
        it as a context manager:

        >>> with IndexTable.for_path(spark, "/lake/index").stream_companion(30) as stream:
        ...     stream.await_termination(3600)

        Raises `ValueError` when this table is not a companion index of another table's files.
        """
        state = self._companion_state()
        seconds = _positive("poll_interval_seconds", poll_interval_seconds)
        statement = _companion_build(state) + f" WITH STREAMING POLL INTERVAL {seconds} SECONDS"
        return CompanionStream(
            self._spark, str(state["table_path"]), lambda: self._command(statement).collect()
        )

    def _companion_state(self) -> Row:
        """This index's DESCRIBE row; raises ValueError unless it is a companion index of
        another table's files."""
        (state,) = self.describe().collect()
        if state["source_path"] is None:
            raise ValueError(
                f"{self._target} is not a companion index of another table's files: "
                "BUILD INDEXTABLES COMPANION makes one"
            )
        return state

    def _command(self, template: str) -> DataFrame:
        """Runs the SQL command `template` with `{table}` standing for this table."""
        try:
            return self._spark.sql(template.format(table=self._target))
        except Exception as error:
            _raise_converted(error)
            raise

    def __repr__(self) -> str:
        return f"IndexTable({self._target})"


class CompanionStream:
    """A companion index kept in sync with its source on a thread of its own, as
    `IndexTable.stream_companion` starts it; modelled on Structured Streaming's
    `StreamingQuery`."""

    def __init__(self, spark: SparkSession, index: str, run: Callable[[], list[Row]]) -> None:
        self._spark = spark
        self._index = index
        self._results: list[Row] = []
        self._error: Exception | None = None

        def body() -> None:
            try:
                self._results = run()
            except Exception as error:  # noqa: BLE001 (await_termination raises it)
                self._error = error

        self._thread = threading.Thread(target=body, name=f"companion-stream {index}", daemon=True)
        self._thread.start()

    @property
    def is_active(self) -> bool:
        """Whether the stream still runs."""
        return self._thread.is_alive()

    @property
    def results(self) -> list[Row]:
        """Once the stream ended: a row for each sync that committed (the command's columns:
        status, source_version, splits_created, ...), or the last sync's row if none did."""
        return list(self._results)

    @property
    def exception(self) -> Exception | None:
        """The error that ended the stream, if one did."""
        return self._error

    def stop(self, timeout: float | None = None) -> None:
        """Stops the stream after the sync it is running, and waits up to `timeout` seconds
        (None: for good) for it to end."""
        statement = f"STOP INDEXTABLES COMPANION STREAM AT LOCATION {_quoted(self._index)}"

        def stopped() -> bool:
            (row,) = self._spark.sql(statement).collect()
            return bool(row["stopped"])

        deadline = None if timeout is None else time.monotonic() + timeout
        # The stream registers once its command starts: ask until it has, or has ended.
        while self._thread.is_alive() and not stopped():
            if deadline is not None and time.monotonic() > deadline:
                return
            self._thread.join(0.1)
        self._thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))

    def await_termination(self, timeout: float | None = None) -> bool:
        """Waits up to `timeout` seconds (None: until it ends) for the stream to end; returns
        whether it has. Raises the error that ended it, if one did."""
        self._thread.join(timeout)
        if self._error is not None:
            raise self._error
        return not self._thread.is_alive()

    def __enter__(self) -> CompanionStream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"CompanionStream({self._index}, active={self.is_active})"


def _companion_build(state: Row) -> str:
    """The BUILD INDEXTABLES COMPANION that syncs the companion index DESCRIBE showed as
    `state`."""
    return (
        f"BUILD INDEXTABLES COMPANION FOR {str(state['source_format']).upper()} "
        f"{_quoted(str(state['source_path']))} AT LOCATION {_quoted(str(state['table_path']))}"
    )


def _where(where: str | None) -> str:
    if where is None:
        return ""
    if not isinstance(where, str):
        raise TypeError(f"where must be a str, got {where!r}")
    # Braces would be read as the template's placeholders.
    return " WHERE " + where.replace("{", "{{").replace("}", "}}")


def _quoted(value: str) -> str:
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _positive(name: str, value: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}")
    return value


def _non_negative(name: str, value: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"{name} must be a non-negative int, got {value!r}")
    return value


def _flag(on: bool, clause: str) -> str:
    if not isinstance(on, bool):
        raise TypeError(f"expected a bool, got {on!r}")
    return clause if on else ""


def _identifiers(name: str, values: Sequence[str]) -> str:
    if isinstance(values, str) or not all(isinstance(v, str) and v for v in values):
        raise TypeError(f"{name} must be a sequence of non-empty str, got {values!r}")
    return ", ".join("`" + v.replace("`", "``") + "`" for v in values)


def _existing(spark: SparkSession, target: str) -> str:
    """`target` (a table's SQL form), once the table is known to exist: the commands' own check
    of it, through DESCRIBE INDEXTABLES STATE, so that a missing table raises as they do."""
    if not is_classic_or_connect(spark, SparkSession, "pyspark.sql.connect.session"):
        raise TypeError(
            "spark must be a pyspark.sql.SparkSession (classic or Spark Connect), "
            f"got {type(spark).__name__}"
        )
    try:
        spark.sql(f"DESCRIBE INDEXTABLES STATE {target}").collect()
    except Exception as error:
        _raise_converted(error)
        raise
    return target


def _name_parts(name: str) -> list[str]:
    """The parts of a multi-part name as SQL writes it (`db.logs`, `` `my table` ``, with
    `` ` `` doubled inside back quotes); raises ValueError for text that is not one."""
    parts: list[str] = []
    i, n = 0, len(name)
    while True:
        if i < n and name[i] == "`":
            j, part = i + 1, []
            while True:
                if j >= n:
                    raise ValueError(f"unclosed back quote in the table name {name!r}")
                if name[j] == "`":
                    if j + 1 < n and name[j + 1] == "`":
                        part.append("`")
                        j += 2
                        continue
                    break
                part.append(name[j])
                j += 1
            parts.append("".join(part))
            i = j + 1
        else:
            j = i
            while j < n and (name[j].isalnum() or name[j] == "_"):
                j += 1
            if j == i:
                raise ValueError(f"{name!r} is not a table name (as SQL writes one: db.table)")
            parts.append(name[i:j])
            i = j
        if i == n:
            return parts
        if name[i] != ".":
            raise ValueError(f"{name!r} is not a table name (as SQL writes one: db.table)")
        i += 1


def _raise_converted(error: Exception) -> None:
    """Raises the IndexTablesError that `error` stands for, if it is one of ours."""
    converted = convert_exception(error)
    if converted is not error:
        raise converted from error

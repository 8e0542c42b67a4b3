"""Python exceptions for errors the IndexTables plugin raises on the JVM side.

Importing `indextables` installs the mapping into PySpark's own conversion of JVM exceptions (the
hook every py4j call of `spark.sql(...)`, `df.collect()` and `df.write...save()` goes through), as
delta-spark does: an error whose JVM cause chain holds an IndexTables exception arrives as the
subclass of :class:`IndexTablesError` its error class maps to, with nothing to call. Where PySpark
has a matching type of its own the class subclasses it too, so `except AnalysisException` code
keeps working: :class:`TableNotFoundError`, :class:`TableExistsError`,
:class:`SchemaMismatchError`, :class:`InvalidQueryError`, :class:`TimeTravelError` and
:class:`UnsupportedTypeError` are `AnalysisException`s, :class:`CommandSyntaxError` is a
`ParseException` and :class:`InvalidOptionError` an `IllegalArgumentException`.

A Spark Connect session (`SparkSession.builder.remote(...)`) has no JVM beside it: its errors
arrive as gRPC errors that carry the server's exception classes and message. Importing
`indextables` wraps the Connect client's conversion of them too (where importing the Connect
client is safe: see `install_exception_mapping`), so an IndexTables error arrives as the same
subclass, with its error class, on either kind of session.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

from pyspark.errors.exceptions import captured
from pyspark.errors.exceptions.captured import (
    AnalysisException,
    CapturedException,
    IllegalArgumentException,
    ParseException,
)

__all__ = [
    "CommandSyntaxError",
    "ConcurrentCommitError",
    "CorruptTableError",
    "IndexTablesError",
    "InvalidOptionError",
    "InvalidQueryError",
    "SchemaMismatchError",
    "StorageError",
    "TableExistsError",
    "TableNotFoundError",
    "TimeTravelError",
    "UnsupportedProtocolError",
    "UnsupportedSparkError",
    "UnsupportedTypeError",
    "convert_exception",
    "error_type",
    "install_exception_mapping",
]

_JVM_PACKAGE: Final[str] = "io.indextables.spark"

# Every IndexTables message starts with its error class in brackets, as Spark's own errors do.
_ERROR_CLASS: Final[re.Pattern[str]] = re.compile(r"\[(INDEXTABLES_[A-Z0-9_]+)\]")


class IndexTablesError(CapturedException):
    """An error raised by IndexTables, carrying the JVM exception's message unchanged.

    `error_class` is the stable name of the error (such as ``INDEXTABLES_TABLE_NOT_FOUND`` or
    ``INDEXTABLES_CONCURRENT_COMMIT``): match on it, or on the subclass, rather than on the
    message. `sql_state` (also `getSqlState()`) is its SQLSTATE, as the JVM reports it.
    `java_class` names the JVM exception class of the plugin's throwable.
    """

    def __init__(
        self,
        message: str,
        java_class: str | None = None,
        error_class: str | None = None,
        *,
        origin: Any = None,
        sql_state: str | None = None,
    ) -> None:
        Exception.__init__(self, message)
        self.message = message
        # PySpark 3.5's CapturedException reads desc, stackTrace and cause; PySpark 4's reads
        # them with a leading underscore. Both are set, so the class works under either.
        self.desc = self._desc = message
        self.java_class = java_class
        """Fully qualified name of the JVM exception class, when known."""
        self.error_class = error_class if error_class is not None else _error_class_in(message)
        """The stable error class, when known."""
        self.sql_state = sql_state
        """The SQLSTATE the JVM exception reports (`SparkThrowable.getSqlState`), when known."""
        # The JVM throwable PySpark caught (the top of the chain), for its stack trace.
        self._origin = origin
        self.stackTrace = self._stackTrace = _stack_trace(origin)
        self.cause = self._cause = None

    def __str__(self) -> str:
        if not self.stackTrace or _classic_jvm() is None:
            return self.message
        return super().__str__()

    def getErrorClass(self) -> str | None:
        return self.error_class

    def getCondition(self) -> str | None:
        """The error class, by PySpark 4's name for it."""
        return self.error_class

    def getMessageParameters(self) -> dict[str, str] | None:
        return None

    def getSqlState(self) -> str | None:  # type: ignore[override]
        return self.sql_state


class ConcurrentCommitError(IndexTablesError):
    """A commit lost to concurrent writers more often than it may retry, or a concurrent
    commit changed what it read (``INDEXTABLES_CONCURRENT_COMMIT``,
    ``INDEXTABLES_CONCURRENT_SCHEMA_CHANGE``). Retrying the operation is safe."""


class TableNotFoundError(IndexTablesError, AnalysisException):
    """No IndexTables table at the path or name (``INDEXTABLES_TABLE_NOT_FOUND``)."""


class TableExistsError(IndexTablesError, AnalysisException):
    """A table already exists where one was to be created (``INDEXTABLES_TABLE_EXISTS``)."""


class SchemaMismatchError(IndexTablesError, AnalysisException):
    """Written data does not fit the table: columns, types, partitioning or the typemap differ
    (``INDEXTABLES_SCHEMA_MISMATCH``, ``..._TYPEMAP_CHANGED``, ``..._PARTITIONING_MISMATCH``,
    ``..._PARTITION_COLUMN_MISSING``)."""


class InvalidQueryError(IndexTablesError, AnalysisException):
    """An IndexQuery that is malformed or cannot be answered where it stands
    (``INDEXTABLES_INVALID_INDEXQUERY``, every ``INDEXTABLES_INDEXQUERY_*``, and a bad
    ``indextables_snippet`` call: ``INDEXTABLES_SNIPPET_ARGUMENTS``, ``_SNIPPET_NOT_STRING``)."""


class TimeTravelError(IndexTablesError, AnalysisException):
    """A version or timestamp the table cannot be read at (``INDEXTABLES_VERSION_NOT_FOUND``,
    ``..._VERSION_REMOVED``, ``..._SPLIT_PURGED``, ``..._TIMESTAMP_BEFORE_TABLE``,
    ``..._TIME_TRAVEL_CONFLICT``)."""


class UnsupportedTypeError(IndexTablesError, AnalysisException):
    """A column type or partitioning the format cannot store (``INDEXTABLES_UNSUPPORTED_*``
    other than the protocol)."""


class CommandSyntaxError(IndexTablesError, ParseException):
    """An IndexTables SQL command that does not parse (``INDEXTABLES_COMMAND_SYNTAX_ERROR``,
    ``INDEXTABLES_COMMAND_TARGET``)."""


class InvalidOptionError(IndexTablesError, IllegalArgumentException):
    """A setting or option with a wrong value or an unknown name, or an invalid indexing
    request (``INDEXTABLES_INVALID_OPTION``, ``..._UNKNOWN_OPTION``, ``..._INVALID_TYPEMAP``,
    ``..._PATH_REQUIRED``, ``..._INVALID_REPLACE_WHERE``, ``..._INVALID_IP``, ...)."""


class UnsupportedProtocolError(IndexTablesError):
    """The table needs a newer reader or writer than this one
    (``INDEXTABLES_UNSUPPORTED_PROTOCOL``)."""


class CorruptTableError(IndexTablesError):
    """A log or split file is missing, unreadable or inconsistent (``INDEXTABLES_LOG_*``,
    ``..._SPLIT_MISSING``, ``..._SPLIT_UNREADABLE``, ``..._DELETION_VECTOR_UNREADABLE``,
    ``..._SPLIT_NOT_SINGLE_SEGMENT``, ``..._INVALID_DOC_MAPPING``,
    ``..._NATIVE_DATA_UNEXPECTED``), or a companion table's Parquet file is missing, changed
    since it was indexed, or out of place (``..._COMPANION_FILE_UNREADABLE``,
    ``..._COMPANION_FILE_CHANGED``, ``..._COMPANION_FILES_SCATTERED``)."""


class UnsupportedSparkError(IndexTablesError):
    """The running Spark does not serve what was asked: the JAR is for another Spark line
    (``INDEXTABLES_WRONG_SPARK_VERSION``), or a companion index over an Iceberg table is built or
    checked on Spark 4.2, for which Iceberg has no runtime
    (``INDEXTABLES_COMPANION_SOURCE_UNSUPPORTED_SPARK``)."""


class StorageError(IndexTablesError):
    """The object store refused or failed a request (``INDEXTABLES_STORAGE_*``)."""


_BY_ERROR_CLASS: Final[Mapping[str, type[IndexTablesError]]] = MappingProxyType(
    {
        "INDEXTABLES_CONCURRENT_COMMIT": ConcurrentCommitError,
        "INDEXTABLES_CONCURRENT_SCHEMA_CHANGE": ConcurrentCommitError,
        "INDEXTABLES_TABLE_NOT_FOUND": TableNotFoundError,
        "INDEXTABLES_TABLE_EXISTS": TableExistsError,
        "INDEXTABLES_SCHEMA_MISMATCH": SchemaMismatchError,
        "INDEXTABLES_TYPEMAP_CHANGED": SchemaMismatchError,
        "INDEXTABLES_PARTITIONING_MISMATCH": SchemaMismatchError,
        "INDEXTABLES_PARTITION_COLUMN_MISSING": SchemaMismatchError,
        "INDEXTABLES_INVALID_INDEXQUERY": InvalidQueryError,
        "INDEXTABLES_SNIPPET_ARGUMENTS": InvalidQueryError,
        "INDEXTABLES_SNIPPET_NOT_STRING": InvalidQueryError,
        "INDEXTABLES_VERSION_NOT_FOUND": TimeTravelError,
        "INDEXTABLES_VERSION_REMOVED": TimeTravelError,
        "INDEXTABLES_SPLIT_PURGED": TimeTravelError,
        "INDEXTABLES_TIMESTAMP_BEFORE_TABLE": TimeTravelError,
        "INDEXTABLES_TIME_TRAVEL_CONFLICT": TimeTravelError,
        "INDEXTABLES_UNSUPPORTED_TYPE": UnsupportedTypeError,
        "INDEXTABLES_UNSUPPORTED_PARTITIONING": UnsupportedTypeError,
        "INDEXTABLES_UNSUPPORTED_PARTITION_TYPE": UnsupportedTypeError,
        "INDEXTABLES_UNSUPPORTED_PROTOCOL": UnsupportedProtocolError,
        "INDEXTABLES_COMMAND_SYNTAX_ERROR": CommandSyntaxError,
        "INDEXTABLES_COMMAND_TARGET": CommandSyntaxError,
        "INDEXTABLES_PARTITION_PREDICATE": InvalidOptionError,
        "INDEXTABLES_INVALID_PARTITION_PREDICATE": InvalidOptionError,
        "INDEXTABLES_UNKNOWN_INDEX_COMPONENT": InvalidOptionError,
        "INDEXTABLES_UNKNOWN_FIELD": InvalidOptionError,
        "INDEXTABLES_INVALID_OPTION": InvalidOptionError,
        "INDEXTABLES_UNKNOWN_OPTION": InvalidOptionError,
        "INDEXTABLES_INVALID_TYPEMAP": InvalidOptionError,
        "INDEXTABLES_PATH_REQUIRED": InvalidOptionError,
        "INDEXTABLES_INVALID_REPLACE_WHERE": InvalidOptionError,
        "INDEXTABLES_REPLACE_WHERE_VIOLATION": InvalidOptionError,
        "INDEXTABLES_INVALID_IP": InvalidOptionError,
        "INDEXTABLES_INDEX_ONLY_FILTER": InvalidOptionError,
        "INDEXTABLES_LOG_INCOMPLETE": CorruptTableError,
        "INDEXTABLES_LOG_FILE_UNREADABLE": CorruptTableError,
        "INDEXTABLES_LOG_CORRUPT": CorruptTableError,
        "INDEXTABLES_LOG_MALFORMED_ACTION": CorruptTableError,
        "INDEXTABLES_LOG_MALFORMED_CHECKPOINT_POINTER": CorruptTableError,
        "INDEXTABLES_LOG_MALFORMED_STATE": CorruptTableError,
        "INDEXTABLES_NATIVE_DATA_UNEXPECTED": CorruptTableError,
        "INDEXTABLES_STATE_NAME_TAKEN": ConcurrentCommitError,
        "INDEXTABLES_INVALID_STORAGE_PATH": InvalidOptionError,
        "INDEXTABLES_INCOMPLETE_CREDENTIALS": InvalidOptionError,
        "INDEXTABLES_INVALID_DOC_MAPPING": CorruptTableError,
        "INDEXTABLES_SPLIT_MISSING": CorruptTableError,
        "INDEXTABLES_SPLIT_UNREADABLE": CorruptTableError,
        "INDEXTABLES_DELETION_VECTOR_UNREADABLE": CorruptTableError,
        "INDEXTABLES_SPLIT_NOT_SINGLE_SEGMENT": CorruptTableError,
        "INDEXTABLES_COMPANION_FILE_UNREADABLE": CorruptTableError,
        "INDEXTABLES_COMPANION_FILE_CHANGED": CorruptTableError,
        "INDEXTABLES_COMPANION_FILES_SCATTERED": CorruptTableError,
        "INDEXTABLES_STORAGE_NOT_FOUND": StorageError,
        "INDEXTABLES_STORAGE_REQUEST_FAILED": StorageError,
        "INDEXTABLES_PATH_OUTSIDE_TABLE": CorruptTableError,
        "INDEXTABLES_BUCKET_FUNCTION_ARGUMENTS": InvalidQueryError,
        "INDEXTABLES_CATALOG_LOCATION_EXISTS": TableExistsError,
        "INDEXTABLES_CATALOG_SCHEMA_MISMATCH": SchemaMismatchError,
        "INDEXTABLES_CATALOG_SCHEMA_REQUIRED": SchemaMismatchError,
        "INDEXTABLES_INVALID_MERGE_OPTION": InvalidOptionError,
        "INDEXTABLES_INVALID_MERGE_WHERE": InvalidOptionError,
        "INDEXTABLES_MERGE_WHERE_NOT_PARTITION": InvalidOptionError,
        "INDEXTABLES_INVALID_DROP_PARTITIONS": InvalidOptionError,
        "INDEXTABLES_INVALID_REPAIR": InvalidOptionError,
        "INDEXTABLES_PURGE_RETENTION_TOO_SHORT": InvalidOptionError,
        "INDEXTABLES_INDEXING_PROPERTY_ALTERED": InvalidOptionError,
        "INDEXTABLES_STORAGE_PROPERTY_IN_TABLE": InvalidOptionError,
        "INDEXTABLES_REPLACE_LOCATION": InvalidOptionError,
        "INDEXTABLES_UNSUPPORTED_TABLE_CHANGE": UnsupportedTypeError,
        "INDEXTABLES_COMPANION_BUILD_CONFLICT": ConcurrentCommitError,
        "INDEXTABLES_COMPANION_STREAM_ACTIVE": ConcurrentCommitError,
        "INDEXTABLES_COMPANION_SCHEMA_CHANGED": SchemaMismatchError,
        "INDEXTABLES_COMPANION_INDEXING_CHANGED": SchemaMismatchError,
        "INDEXTABLES_COMPANION_UNSUPPORTED_COLUMN": UnsupportedTypeError,
        "INDEXTABLES_COMPANION_UNKNOWN_OPTION": InvalidOptionError,
        "INDEXTABLES_COMPANION_INVALID_OPTION": InvalidOptionError,
        "INDEXTABLES_COMPANION_UNKNOWN_INDEXING_MODE": InvalidOptionError,
        "INDEXTABLES_COMPANION_UNKNOWN_COLUMN": InvalidOptionError,
        "INDEXTABLES_COMPANION_TARGET_MISMATCH": InvalidOptionError,
        "INDEXTABLES_WRONG_SPARK_VERSION": UnsupportedSparkError,
        "INDEXTABLES_COMPANION_SOURCE_UNSUPPORTED_SPARK": UnsupportedSparkError,
    }
)

_QUERY_PREFIX: Final[str] = "INDEXTABLES_INDEXQUERY_"


def error_type(error_class: str | None) -> type[IndexTablesError]:
    """The Python class an error class maps to (IndexTablesError for one it does not know)."""
    if error_class is None:
        return IndexTablesError
    if error_class.startswith(_QUERY_PREFIX):
        return InvalidQueryError
    return _BY_ERROR_CLASS.get(error_class, IndexTablesError)


def convert_exception(error: BaseException) -> BaseException:
    """Return the IndexTablesError for a py4j or PySpark exception that IndexTables raised.

    Errors already arrive converted once `indextables` is imported; this is for exceptions
    caught by other means (and is the identity on an IndexTablesError). An exception counts as
    ours when a JVM throwable in its cause chain is of a class under `io.indextables.spark` (its
    message is kept), or when its message names that package. Anything else is returned
    unchanged, so callers can write `raise convert_exception(e) from e`.
    """
    if isinstance(error, IndexTablesError):
        return error
    top = _java_throwable(error)
    converted = _from_throwable(top) if top is not None else None
    if converted is not None:
        return converted
    message = str(error)
    if _JVM_PACKAGE in message:
        return error_type(_error_class_in(message))(message)
    return error


def _from_throwable(top: Any) -> IndexTablesError | None:
    """The IndexTablesError for the first plugin throwable in top's cause chain, if any."""
    throwable = top
    seen = 0
    while throwable is not None and seen < 20:
        name = str(throwable.getClass().getName())
        if name.startswith(_JVM_PACKAGE):
            message = str(throwable.getMessage())
            error_class = _jvm_error_class(throwable) or _error_class_in(message)
            return error_type(error_class)(
                message,
                java_class=name,
                error_class=error_class,
                origin=top,
                sql_state=_jvm_sql_state(throwable),
            )
        throwable = throwable.getCause()
        seen += 1
    return None


_pyspark_convert: Callable[[Any], CapturedException] | None = None


def _convert_captured(e: Any) -> CapturedException:
    """PySpark's `convert_exception` (same signature), first trying ours: installed in its place."""
    ours = _from_throwable(e)
    if ours is not None:
        return ours
    assert _pyspark_convert is not None
    return _pyspark_convert(e)


_pyspark_connect_convert: Callable[[Any, str], Exception] | None = None

# How a Spark Connect server prefixes an error's message with its JVM class.
_CONNECT_CLASS: Final[re.Pattern[str]] = re.compile(r"^\(([\w.$]+)\) ")
_SQL_STATE: Final[re.Pattern[str]] = re.compile(r"SQLSTATE: ([0-9A-Z]{5})")


def _from_connect(info: Any, message: str) -> IndexTablesError | None:
    """The IndexTablesError for an error a Spark Connect server sent, if it is one of ours: its
    exception classes (`info.metadata["classes"]`, the server's throwable and its superclasses)
    or its message name the plugin's package, or the message holds our error class."""
    metadata = getattr(info, "metadata", {}) or {}
    classes: list[str] = []
    if "classes" in metadata:
        try:
            classes = [str(c) for c in json.loads(metadata["classes"])]
        except ValueError:
            classes = []
    prefix = _CONNECT_CLASS.match(message)
    java_class = next((c for c in classes if c.startswith(_JVM_PACKAGE)), None)
    if java_class is None and prefix and prefix.group(1).startswith(_JVM_PACKAGE):
        java_class = prefix.group(1)
    error_class = metadata.get("errorClass") or _error_class_in(message)
    if java_class is None and (error_class is None or not error_class.startswith("INDEXTABLES_")):
        return None
    # The message as a classic session shows it: without the "(class) " prefix.
    text = message[prefix.end() :] if prefix and java_class == prefix.group(1) else message
    state = metadata.get("sqlState") or _SQL_STATE.search(message)
    sql_state = state if isinstance(state, str) or state is None else state.group(1)
    return error_type(error_class)(
        text, java_class=java_class, error_class=error_class, sql_state=sql_state
    )


def _convert_connect(info: Any, message: str, *more: Any, **named: Any) -> Exception:
    """The Spark Connect client's `convert_exception`, first trying ours: its signature is
    `(info, truncated_message)` in PySpark 3.5, and has more arguments in PySpark 4 (the error
    details response, whether to show the server's stack trace), passed on unchanged."""
    ours = _from_connect(info, message)
    if ours is not None:
        return ours
    assert _pyspark_connect_convert is not None
    return _pyspark_connect_convert(info, message, *more, **named)


def _connect_importable() -> bool:
    """Whether importing PySpark's Connect client cannot end the process. PySpark 4.2's
    `pyspark.sql.connect` takes a process whose `__main__` has neither `__spec__` nor `__file__`
    (a script given with `python -c`, or piped in where `__main__` has no `__file__`; not an
    interactive one) for a doctest run, and calls `sys.exit` on import when one of the Connect
    client's requirements is missing; so importing `indextables` there must not import it (the
    same check as PySpark's). Once the client is imported (its user imported it), it is safe."""
    if "pyspark.sql.connect.client" in sys.modules:
        return True
    main = sys.modules.get("__main__")
    return (
        main is None
        or getattr(main, "__spec__", None) is not None
        or hasattr(main, "__file__")
        or hasattr(sys, "ps1")
    )


def install_exception_mapping(connect: bool = False) -> None:
    """Make PySpark raise IndexTables errors as IndexTablesError subclasses (idempotent).

    PySpark turns every JVM exception a py4j call raises into a Python one through
    `pyspark.errors.exceptions.captured.convert_exception`; this wraps that function, so every
    session (also one started before this call) raises ours. A Spark Connect client turns each
    error the server sends into one through the `convert_exception` its client module imported
    from `pyspark.errors.exceptions.connect`; that one is wrapped too, when PySpark's Connect
    client is installed (it needs grpcio, pandas and pyarrow) and importing it is safe
    (`_connect_importable`), or `connect` is true (a session about to import it anyway:
    `configure_spark` of a `remote` builder). Importing `indextables` calls it; `configure_spark`
    calls it again, so that a Connect client imported since is wrapped.
    """
    global _pyspark_convert, _pyspark_connect_convert
    current = captured.convert_exception
    if current is not _convert_captured:
        _pyspark_convert = current
        captured.convert_exception = _convert_captured
    if not connect and not _connect_importable():
        return
    try:
        from pyspark.sql.connect.client import core
    except Exception:  # noqa: BLE001 (no Connect client here: classic sessions only)
        return
    client: Any = core
    connect_current = client.convert_exception
    if connect_current is not _convert_connect:
        _pyspark_connect_convert = connect_current
        client.convert_exception = _convert_connect


def _java_throwable(error: BaseException) -> Any:
    """The JVM throwable behind a Py4JJavaError or a PySpark CapturedException, if any."""
    for attr in ("java_exception", "_origin"):
        throwable = getattr(error, attr, None)
        if throwable is not None and hasattr(throwable, "getClass"):
            return throwable
    return None


def _classic_jvm() -> Any:
    """The JVM gateway of this process's classic SparkContext; None with none, and always under
    `pyspark-client` (Spark Connect's Python-only PySpark, which has no SparkContext)."""
    try:
        from pyspark import SparkContext
    except ImportError:
        return None
    return SparkContext._jvm


def _stack_trace(origin: Any) -> str:
    jvm = _classic_jvm()
    if origin is None or jvm is None or not hasattr(origin, "getClass"):
        return ""
    try:
        return str(jvm.org.apache.spark.util.Utils.exceptionString(origin))
    except Exception:  # noqa: BLE001 (a handle that is gone: no trace rather than no error)
        return ""


def _jvm_error_class(throwable: Any) -> str | None:
    """The error class the JVM exception reports (`getErrorClass`), if it has one."""
    return _jvm_string(throwable, "getErrorClass")


def _jvm_sql_state(throwable: Any) -> str | None:
    """The SQLSTATE the JVM exception reports (`SparkThrowable.getSqlState`), if it has one."""
    return _jvm_string(throwable, "getSqlState")


def _jvm_string(throwable: Any, method: str) -> str | None:
    """What the JVM throwable's no-argument `method` returns, as text; None if it has none."""
    try:
        value = getattr(throwable, method)()
    except Exception:  # noqa: BLE001 (a throwable without the method, or a handle that is gone)
        return None
    return str(value) if value is not None else None


def _error_class_in(message: str) -> str | None:
    match = _ERROR_CLASS.search(message)
    return match.group(1) if match else None

"""The plugin's JVM errors arrive as `indextables` exceptions with nothing called by the user.

Each error here is a real one, raised by the JVM through Spark's own calls (`spark.sql`,
`df.collect()`, `df.write...save()`): the test only catches it. The commit conflict is
raised by two real concurrent overwrites in tests/test_overwrite_failures.py, which checks
its type too.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.errors.exceptions.captured import (
    AnalysisException,
    CapturedException,
    IllegalArgumentException,
    ParseException,
)
from pyspark.sql import SparkSession

import indextables
from helpers import TYPEMAP, read_table, write_table
from indextables import (
    CommandSyntaxError,
    CorruptTableError,
    IndexTablesError,
    InvalidOptionError,
    InvalidQueryError,
    SchemaMismatchError,
    TableNotFoundError,
    convert_exception,
)
from indextables.functions import indexquery


@pytest.fixture(scope="module")
def table(spark: SparkSession, tmp_path_factory: pytest.TempPathFactory) -> str:
    path = str(tmp_path_factory.mktemp("errors") / "table")
    rows = [(i, f"host-{i % 3}", f"request {i} timed out") for i in range(200)]
    df = spark.createDataFrame(rows, "id long, host string, message string").coalesce(1)
    write_table(df, path, options={TYPEMAP + "message": "text"})
    read_table(spark, path).createOrReplaceTempView("err_logs")
    return path


def test_a_missing_table_raises_table_not_found_an_analysis_exception_with_its_sqlstate(
    spark: SparkSession, tmp_path: Path
) -> None:
    missing = str(tmp_path / "nothing-here")
    with pytest.raises(TableNotFoundError) as info:
        spark.read.format("indextables").load(missing).collect()
    error = info.value
    assert isinstance(error, AnalysisException) and isinstance(error, IndexTablesError)
    assert error.error_class == "INDEXTABLES_TABLE_NOT_FOUND" == error.getErrorClass()
    # Its SQLSTATE comes from the JVM. The JVM exception is a SparkThrowable, so PySpark's own
    # exception type, given the same throwable, reports class and SQLSTATE too (as for Delta's).
    assert error.getSqlState() == "42P01" == error.sql_state
    plain = CapturedException(origin=error._origin)
    assert plain.getErrorClass() == "INDEXTABLES_TABLE_NOT_FOUND"
    assert plain.getSqlState() == "42P01"
    assert missing in error.message and missing in str(error)
    assert error.java_class == "io.indextables.spark.exceptions.TransactionLogException"
    # The same through SQL, and code written for PySpark's own type still catches it.
    try:
        spark.sql(f"SELECT * FROM indextables.`{missing}`").collect()
    except AnalysisException as e:
        assert isinstance(e, TableNotFoundError), type(e)
    else:
        pytest.fail("reading a missing table by SQL raised nothing")


def test_a_malformed_indexquery_raises_invalid_query_error(spark: SparkSession, table: str) -> None:
    with pytest.raises(InvalidQueryError) as info:
        spark.sql("SELECT * FROM err_logs WHERE message indexquery 'timed AND (out'").collect()
    assert info.value.error_class == "INDEXTABLES_INVALID_INDEXQUERY"
    assert "timed AND (out" in info.value.message
    assert isinstance(info.value, AnalysisException)
    # The Column form fails the same way.
    with pytest.raises(InvalidQueryError):
        read_table(spark, table).filter(indexquery("message", "timed AND (out")).collect()


def test_an_append_with_a_changed_column_type_raises_schema_mismatch(
    spark: SparkSession, table: str
) -> None:
    other = spark.createDataFrame([("x", "h", "m")], "id string, host string, message string")
    with pytest.raises(SchemaMismatchError) as info:
        other.write.format("indextables").mode("append").save(table)
    assert info.value.error_class == "INDEXTABLES_SCHEMA_MISMATCH"
    assert "id" in info.value.message
    assert isinstance(info.value, AnalysisException)
    assert read_table(spark, table).count() == 200


def test_an_invalid_option_raises_invalid_option_error_an_illegal_argument(
    spark: SparkSession, table: str
) -> None:
    reader = spark.read.format("indextables").option("spark.indextables.read.batchSize", "zero")
    with pytest.raises(InvalidOptionError) as info:
        reader.load(table).collect()
    assert isinstance(info.value, IllegalArgumentException)
    assert "spark.indextables.read.batchSize" in info.value.message


def test_a_malformed_command_raises_command_syntax_error_a_parse_exception(
    spark: SparkSession, table: str
) -> None:
    with pytest.raises(CommandSyntaxError) as info:
        spark.sql(f"DESCRIBE INDEXTABLES STATE '{table}' EXTRA WORDS")
    assert isinstance(info.value, ParseException)
    assert info.value.error_class == "INDEXTABLES_COMMAND_SYNTAX_ERROR"


def test_an_executor_side_failure_arrives_converted(spark: SparkSession, tmp_path: Path) -> None:
    path = str(tmp_path / "table")
    df = spark.createDataFrame([(i, f"m {i}") for i in range(100)], "id long, message string")
    write_table(df.coalesce(1), path)
    for split in Path(path).rglob("*.split"):
        split.unlink()
    with pytest.raises(CorruptTableError) as info:
        read_table(spark, path).collect()
    assert info.value.error_class in {"INDEXTABLES_SPLIT_MISSING", "INDEXTABLES_SPLIT_UNREADABLE"}


def test_other_errors_keep_pysparks_types(spark: SparkSession, table: str) -> None:
    with pytest.raises(AnalysisException) as info:
        spark.sql("SELECT no_such_column FROM err_logs").collect()
    assert not isinstance(info.value, IndexTablesError)
    assert convert_exception(info.value) is info.value


def test_the_mapping_is_installed_once_by_import_and_by_configure_spark(
    spark: SparkSession, tmp_path: Path
) -> None:
    from pyspark.errors.exceptions import captured

    hook = captured.convert_exception
    indextables.install_exception_mapping()
    indextables.configure_spark(SparkSession.builder)
    assert captured.convert_exception is hook
    with pytest.raises(TableNotFoundError):
        read_table(spark, str(tmp_path / "missing")).collect()


@pytest.mark.usefixtures("layout")
def test_a_malformed_action_in_the_log_is_a_corrupt_table_with_sqlstate_xx001(
    spark: SparkSession, tmp_path: Path
) -> None:
    path = str(tmp_path / "table")
    write_table(spark.createDataFrame([(1, "a")], "id long, message string"), path)
    # Version 1 holds an action the protocol does not know (a writer's bug or a foreign log).
    log = Path(path) / "_transaction_log"
    (log / f"{1:020d}.json").write_text('{"commitInfo":{"operation":"WRITE"}}\n')
    with pytest.raises(CorruptTableError) as info:
        read_table(spark, path).collect()
    error = info.value
    assert error.error_class == "INDEXTABLES_LOG_FILE_UNREADABLE"
    assert error.getSqlState() == "XX001"
    assert f"{1:020d}.json" in error.message and "commitInfo" in error.message
    # The cause is the malformed action, with its own class.
    assert "INDEXTABLES_LOG_MALFORMED_ACTION" in error.message

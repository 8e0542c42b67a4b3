package io.indextables.spark.exceptions

import org.apache.spark.SparkThrowable

/**
 * The root of every exception the plugin throws for a user-facing failure. Its message names the
 * table, column, file or query at fault and says what to do, after the error class in brackets,
 * as Spark's own errors read. `errorClass` is a stable name (`INDEXTABLES_TABLE_NOT_FOUND`, …)
 * that callers, and the Python package, match on instead of the message. Instances come from
 * [[io.indextables.spark.IndexTablesErrors]], one factory method per error.
 *
 * It is a [[SparkThrowable]], so Spark and PySpark report its error class and SQLSTATE
 * (`getErrorClass`, `getSqlState`) as they do for Spark's and Delta's errors.
 */
class IndexTablesException(val errorClass: String, val reason: String, cause: Throwable = null)
    extends RuntimeException(s"[$errorClass] $reason", cause)
    with SparkThrowable {

  /** The stable error class, under the name Spark's `SparkThrowable` uses. */
  override def getErrorClass(): String = errorClass

  // Spark 4's name of the error class (Spark 3.5 has no such method, hence no `override`).
  def getCondition(): String = errorClass

  /** The SQLSTATE of the error class ([[IndexTablesException.sqlStateOf]]). */
  override def getSqlState(): String = IndexTablesException.sqlStateOf(errorClass)

  override def isInternalError(): Boolean = errorClass == IndexTablesException.InternalError
}

object IndexTablesException {

  /** The error class of a broken invariant of the plugin itself: a bug to report. */
  val InternalError: String = "INDEXTABLES_INTERNAL_ERROR"

  /**
   * The SQLSTATE of each error class (the classes of SQL:2016 and Spark's `error-classes.json`:
   * `42` a statement or argument the analyzer refuses, `22` a bad value, `0A` an unsupported
   * feature, `40` a transaction rolled back, `58` the storage system, `XX` corrupt data or an
   * internal error). The suite checks that every class `IndexTablesErrors` makes has one.
   */
  val SqlStates: Map[String, String] = Map(
    // Options and values
    "INDEXTABLES_INVALID_OPTION" -> "22023",
    "INDEXTABLES_WRONG_SPARK_VERSION" -> "0A000",
    "INDEXTABLES_COMPANION_SOURCE_UNSUPPORTED_SPARK" -> "0A000",
    "INDEXTABLES_UNKNOWN_OPTION" -> "42K06",
    "INDEXTABLES_INVALID_TYPEMAP" -> "22023",
    "INDEXTABLES_INVALID_IP" -> "22023",
    "INDEXTABLES_INVALID_STORAGE_PATH" -> "22023",
    "INDEXTABLES_INCOMPLETE_CREDENTIALS" -> "22023",
    "INDEXTABLES_PATH_REQUIRED" -> "42K06",
    "INDEXTABLES_INVALID_REPLACE_WHERE" -> "42000",
    "INDEXTABLES_REPLACE_WHERE_VIOLATION" -> "23000",
    "INDEXTABLES_INVALID_MERGE_OPTION" -> "22023",
    "INDEXTABLES_INVALID_MERGE_WHERE" -> "42000",
    "INDEXTABLES_MERGE_WHERE_NOT_PARTITION" -> "42000",
    "INDEXTABLES_INVALID_DROP_PARTITIONS" -> "42000",
    "INDEXTABLES_INVALID_REPAIR" -> "42000",
    "INDEXTABLES_PURGE_RETENTION_TOO_SHORT" -> "22023",
    "INDEXTABLES_PARTITION_PREDICATE" -> "42000",
    "INDEXTABLES_UNKNOWN_INDEX_COMPONENT" -> "42000",
    "INDEXTABLES_UNKNOWN_FIELD" -> "42703",
    "INDEXTABLES_INDEX_ONLY_FILTER" -> "42000",
    "INDEXTABLES_INDEXING_PROPERTY_ALTERED" -> "42000",
    "INDEXTABLES_STORAGE_PROPERTY_IN_TABLE" -> "42000",
    "INDEXTABLES_REPLACE_LOCATION" -> "42000",
    // Tables, schemas and types
    "INDEXTABLES_TABLE_NOT_FOUND" -> "42P01",
    "INDEXTABLES_TABLE_EXISTS" -> "42P07",
    "INDEXTABLES_CATALOG_LOCATION_EXISTS" -> "42P07",
    "INDEXTABLES_CATALOG_SCHEMA_MISMATCH" -> "42K09",
    "INDEXTABLES_CATALOG_SCHEMA_REQUIRED" -> "42000",
    "INDEXTABLES_SCHEMA_MISMATCH" -> "42K09",
    "INDEXTABLES_TYPEMAP_CHANGED" -> "42K09",
    "INDEXTABLES_PARTITIONING_MISMATCH" -> "42K09",
    "INDEXTABLES_PARTITION_COLUMN_MISSING" -> "42703",
    "INDEXTABLES_LAYOUT_MISMATCH" -> "42000",
    "INDEXTABLES_STREAMING_OUTPUT_MODE" -> "0A000",
    "INDEXTABLES_STREAMING_SOURCE_DATA_CHANGED" -> "0A000",
    "INDEXTABLES_STREAMING_SOURCE_OFFSET" -> "22000",
    "INDEXTABLES_STREAMING_SOURCE_SCHEMA_CHANGED" -> "42K09",
    "INDEXTABLES_UNSUPPORTED_TYPE" -> "0A000",
    "INDEXTABLES_COLUMN_NAME_TOO_LONG" -> "42622",
    "INDEXTABLES_UNSUPPORTED_PARTITIONING" -> "0A000",
    "INDEXTABLES_UNSUPPORTED_PARTITION_TYPE" -> "0A000",
    "INDEXTABLES_UNSUPPORTED_TABLE_CHANGE" -> "0A000",
    "INDEXTABLES_UNSUPPORTED_PROTOCOL" -> "0A000",
    "INDEXTABLES_UNSUPPORTED_FEATURE" -> "0A000",
    "INDEXTABLES_NATIVE_LIBRARY_MISMATCH" -> "0A000",
    // Time travel
    "INDEXTABLES_VERSION_NOT_FOUND" -> "42K0E",
    "INDEXTABLES_VERSION_REMOVED" -> "42K0E",
    "INDEXTABLES_TIMESTAMP_BEFORE_TABLE" -> "42K0E",
    "INDEXTABLES_TIME_TRAVEL_CONFLICT" -> "42K0E",
    // Commits
    "INDEXTABLES_INVALID_COMMIT" -> "42000",
    "INDEXTABLES_CONCURRENT_COMMIT" -> "40000",
    "INDEXTABLES_CONCURRENT_SCHEMA_CHANGE" -> "40000",
    "INDEXTABLES_COMPANION_BUILD_CONFLICT" -> "40000",
    "INDEXTABLES_COMPANION_STREAM_ACTIVE" -> "55000",
    "INDEXTABLES_STATE_NAME_TAKEN" -> "40000",
    // Corrupt or unreadable files
    "INDEXTABLES_LOG_INCOMPLETE" -> "XX001",
    "INDEXTABLES_LOG_FILE_UNREADABLE" -> "XX001",
    "INDEXTABLES_LOG_CORRUPT" -> "XX001",
    "INDEXTABLES_LOG_MALFORMED_ACTION" -> "XX001",
    "INDEXTABLES_LOG_MALFORMED_CHECKPOINT_POINTER" -> "XX001",
    "INDEXTABLES_LOG_MALFORMED_STATE" -> "XX001",
    "INDEXTABLES_INVALID_DOC_MAPPING" -> "XX001",
    "INDEXTABLES_SPLIT_MISSING" -> "XX001",
    "INDEXTABLES_SPLIT_UNREADABLE" -> "XX001",
    "INDEXTABLES_DELETION_VECTOR_UNREADABLE" -> "XX001",
    "INDEXTABLES_SPLIT_NOT_SINGLE_SEGMENT" -> "XX001",
    "INDEXTABLES_PATH_OUTSIDE_TABLE" -> "XX001",
    "INDEXTABLES_NATIVE_DATA_UNEXPECTED" -> "XX001",
    "INDEXTABLES_COMPANION_FILE_UNREADABLE" -> "XX001",
    "INDEXTABLES_COMPANION_FILE_CHANGED" -> "XX001",
    "INDEXTABLES_SPLIT_PURGED" -> "42K0E",
    "INDEXTABLES_INVALID_PARTITION_PREDICATE" -> "42000",
    "INDEXTABLES_COMPANION_FILES_SCATTERED" -> "XX001",
    // Storage and the native library's work
    "INDEXTABLES_STORAGE_NOT_FOUND" -> "58030",
    "INDEXTABLES_STORAGE_REQUEST_FAILED" -> "58030",
    "INDEXTABLES_WRITE_FAILED" -> "58030",
    "INDEXTABLES_SEARCH_FAILED" -> "58030",
    "INDEXTABLES_RANKING_FAILED" -> "58030",
    "INDEXTABLES_NATIVE_RANKER_MISSING" -> "0A000",
    "INDEXTABLES_COMPANION_INDEX_FAILED" -> "58030",
    // IndexQuery, aggregations and SQL commands
    "INDEXTABLES_INVALID_INDEXQUERY" -> "42601",
    "INDEXTABLES_BUCKET_FUNCTION_ARGUMENTS" -> "42605",
    "INDEXTABLES_SNIPPET_ARGUMENTS" -> "42605",
    "INDEXTABLES_SNIPPET_NOT_STRING" -> "42K09",
    "INDEXTABLES_AGGREGATE_NOT_PUSHED" -> "0A000",
    "INDEXTABLES_COMMAND_SYNTAX_ERROR" -> "42601",
    "INDEXTABLES_COMMAND_TARGET" -> "42809",
    // BUILD INDEXTABLES COMPANION
    "INDEXTABLES_COMPANION_INDEX_READ_ONLY" -> "42809",
    "INDEXTABLES_COMPANION_INDEX_ONLY" -> "42000",
    "INDEXTABLES_COMPANION_IP_UNSUPPORTED" -> "0A000",
    "INDEXTABLES_COMPANION_SOURCE_NOT_FOUND" -> "42P01",
    "INDEXTABLES_COMPANION_SOURCE_EMPTY" -> "42000",
    "INDEXTABLES_COMPANION_SOURCE_NOT_A_TABLE" -> "42P01",
    "INDEXTABLES_COMPANION_INDEX_STALE" -> "55000",
    "INDEXTABLES_COMPANION_SOURCE_VERSION_UNAVAILABLE" -> "42K0E",
    "INDEXTABLES_COMPANION_SOURCE_FEATURE_UNSUPPORTED" -> "0A000",
    "INDEXTABLES_COMPANION_SOURCE_LIBRARY_MISSING" -> "42K02",
    "INDEXTABLES_COMPANION_DELETED_ROWS_UNPLACEABLE" -> "0A000",
    "INDEXTABLES_COMPANION_UNSUPPORTED_COLUMN" -> "0A000",
    "INDEXTABLES_COMPANION_SCHEMA_CHANGED" -> "42K09",
    "INDEXTABLES_COMPANION_PARTITION_LAYOUT" -> "42000",
    "INDEXTABLES_COMPANION_UNKNOWN_OPTION" -> "42K06",
    "INDEXTABLES_COMPANION_UNKNOWN_INDEXING_MODE" -> "22023",
    "INDEXTABLES_COMPANION_INVALID_OPTION" -> "22023",
    "INDEXTABLES_COMPANION_UNKNOWN_COLUMN" -> "42703",
    "INDEXTABLES_COMPANION_TARGET_MISMATCH" -> "42000",
    "INDEXTABLES_COMPANION_INDEXING_CHANGED" -> "42K09",
    // The plugin's own invariants
    InternalError -> "XX000"
  )

  /** Every `INDEXTABLES_INDEXQUERY_*` class is a query the analyzer refuses. */
  private val IndexQueryPrefix = "INDEXTABLES_INDEXQUERY_"

  /** The SQLSTATE of `errorClass`; `XX000` (internal error) for a class the table lacks. */
  def sqlStateOf(errorClass: String): String =
    SqlStates.getOrElse(
      errorClass,
      if (errorClass.startsWith(IndexQueryPrefix)) "42000" else SqlStates(InternalError))
}

/**
 * A transaction-log failure that a user can act on: a missing table or version, an unreadable
 * log file, an unsupported protocol, or an invalid commit. The message names the table or file.
 */
class TransactionLogException(errorClass: String, reason: String, cause: Throwable = null)
    extends IndexTablesException(errorClass, reason, cause)

/** A commit that gave up after the configured number of attempts lost to other writers. */
class ConcurrentCommitException(reason: String)
    extends TransactionLogException(ConcurrentCommitException.ErrorClass, reason)

object ConcurrentCommitException {
  val ErrorClass: String = "INDEXTABLES_CONCURRENT_COMMIT"
}

package io.indextables.spark.exceptions

/**
 * The root of every exception the plugin throws for a user-facing failure. Its message names the
 * table, column, file or query at fault and says what to do, after the error class in brackets,
 * as Spark's own errors read. `errorClass` is a stable name (`INDEXTABLES_TABLE_NOT_FOUND`, …)
 * that callers, and the Python package, match on instead of the message. Instances come from
 * [[io.indextables.spark.IndexTablesErrors]], one factory method per error.
 */
class IndexTablesException(val errorClass: String, val reason: String, cause: Throwable = null)
    extends RuntimeException(s"[$errorClass] $reason", cause) {

  /** The stable error class, under the name Spark's `SparkThrowable` uses. */
  def getErrorClass: String = errorClass
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

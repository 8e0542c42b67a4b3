package io.indextables.spark.exceptions

/**
 * The one public exception type the plugin throws for a user-facing failure. Its message names the
 * table, column, file or query at fault and says what to do. Python maps it by class name.
 */
class IndexTablesException(message: String, cause: Throwable = null)
  extends RuntimeException(message, cause)

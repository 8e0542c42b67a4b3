package io.indextables.spark

/**
 * Refuses a Spark of another line than the JAR's (`BuildInfo.sparkLine`): each entry point (the
 * session extensions, the catalog, the data source) calls [[check]] first, so that a JAR for the
 * wrong Spark fails when the session starts, naming both versions, and never in the middle of a
 * query with a `NoSuchMethodError`. Thread-safe; a passed check is not repeated.
 */
object SparkVersionCheck {

  @volatile private var passed = false

  /** Throws `INDEXTABLES_WRONG_SPARK_VERSION` unless the running Spark is of this JAR's line. */
  def check(): Unit = if (!passed) {
    val running = org.apache.spark.SPARK_VERSION
    if (!serves(BuildInfo.sparkLine, running))
      throw IndexTablesErrors.wrongSparkVersion(
        running,
        BuildInfo.sparkLine,
        BuildInfo.sparkVersion,
        BuildInfo.scalaBinaryVersion)
    passed = true
  }

  /** Whether a JAR of Spark line `line` ("3.5", "4.0") serves Spark `version` ("3.5.9"). */
  def serves(line: String, version: String): Boolean = version.startsWith(line + ".")
}

package io.indextables.spark

/**
 * Refuses a Spark of a line the JAR does not serve (`BuildInfo.servedLines`: 3.5 for the Scala
 * 2.12 JAR; 4.0, 4.1 and 4.2 for the Scala 2.13 one): each entry point (the session extensions,
 * the catalog, the data source) calls [[check]] first, so that a JAR for the wrong Spark fails
 * when the session starts, naming both versions, and never in the middle of a query with a
 * `NoSuchMethodError`. Thread-safe; a passed check is not repeated.
 */
object SparkVersionCheck {

  @volatile private var passed = false

  /** Throws `INDEXTABLES_WRONG_SPARK_VERSION` unless the running Spark is of a line served. */
  def check(): Unit = if (!passed) {
    val running = org.apache.spark.SPARK_VERSION
    if (!serves(BuildInfo.servedLines, running))
      throw IndexTablesErrors.wrongSparkVersion(
        running,
        BuildInfo.servedLines,
        BuildInfo.sparkVersion,
        BuildInfo.scalaBinaryVersion)
    passed = true
  }

  /** Whether a JAR serving Spark lines `lines` ("3.5"; "4.0", "4.1") serves Spark `version`. */
  def serves(lines: Seq[String], version: String): Boolean =
    lines.exists(line => version.startsWith(line + "."))

  /** The line ("4.2") of Spark `version` ("4.2.0"). */
  def lineOf(version: String): String = version.split('.').take(2).mkString(".")
}

package io.indextables.spark.extensions

import org.apache.spark.sql.SparkSession

/**
 * A fresh local SparkSession with the IndexTables SQL extensions, for suites that need them:
 * extensions are read when a session is built, so any active session is stopped first.
 */
object ExtensionsSession {
  def create(appName: String): SparkSession = {
    SparkSession.getActiveSession.foreach(_.stop())
    SparkSession.clearActiveSession()
    SparkSession.clearDefaultSession()
    SparkSession.builder().master("local[2]").appName(appName)
      .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
      .config("spark.sql.extensions", classOf[IndexTables4SparkExtensions].getName)
      .getOrCreate()
  }
}

package io.indextables.spark

import java.nio.file.Files

import org.apache.commons.io.FileUtils
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

/** One local SparkSession per suite, with a scratch directory for tables. */
trait IndexTablesTestBase extends AnyFunSuite with BeforeAndAfterAll {
  protected lazy val spark: SparkSession = SparkSession.builder()
    .master("local[2]")
    .appName(getClass.getSimpleName)
    .config("spark.ui.enabled", "false")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.sql.session.timeZone", "UTC")
    .getOrCreate()

  protected lazy val scratch: java.io.File = Files.createTempDirectory("indextables-test").toFile

  protected def tablePath(name: String): String = new java.io.File(scratch, name).getAbsolutePath

  /** The executed plan's text, where the scan's description shows what was pushed. */
  protected def executedPlan(df: DataFrame): String = df.queryExecution.executedPlan.toString

  override def afterAll(): Unit = {
    try FileUtils.deleteQuietly(scratch)
    finally super.afterAll()
  }
}

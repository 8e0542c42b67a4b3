package io.indextables.spark.sql.commands

import java.nio.file.Files

import org.apache.commons.io.FileUtils
import org.apache.spark.sql.SparkSession
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.extensions.ExtensionsSession

/** The commands in a session with the extensions, against a table written twice. */
class IndexTablesCommandsSuite extends AnyFunSuite with BeforeAndAfterAll {
  private var spark: SparkSession = _
  private lazy val scratch = Files.createTempDirectory("indextables-cmd").toFile
  private lazy val path = new java.io.File(scratch, "t").getAbsolutePath

  override def beforeAll(): Unit = {
    super.beforeAll()
    spark = ExtensionsSession.create("commands")
    val s = spark; import s.implicits._
    Seq((1L, "a"), (2L, "b")).toDF("id", "s").coalesce(1).write.format("indextables").save(path)
    Seq((3L, "c")).toDF("id", "s").coalesce(1).write.format("indextables").mode("append").save(path)
    spark.read.format("indextables").load(path).createOrReplaceTempView("cmd_t")
  }

  override def afterAll(): Unit = {
    try {
      spark.stop(); SparkSession.clearActiveSession(); SparkSession.clearDefaultSession()
      FileUtils.deleteQuietly(scratch)
    } finally super.afterAll()
  }

  test("DESCRIBE INDEXTABLES STATE by path and by view name") {
    for (target <- Seq(s"'$path'", "cmd_t")) {
      val rows = spark.sql(s"DESCRIBE INDEXTABLES STATE $target").collect()
      assert(rows.length == 1)
      val r = rows.head
      assert(r.getAs[Long]("version") == 1L && r.getAs[Long]("num_files") == 2L)
      assert(r.getAs[Long]("num_records") == 3L)
    }
  }

  test("DESCRIBE TANTIVY4SPARK TRANSACTION LOG: one row per live file with statistics") {
    val df = spark.sql(s"DESCRIBE TANTIVY4SPARK TRANSACTION LOG '$path'")
    assert(df.columns.toSeq.take(4) == Seq("path", "partition_values", "size", "num_records"))
    val rows = df.collect()
    assert(rows.length == 2 && rows.map(_.getAs[Long]("num_records")).sum == 3L)
  }

  test("DESCRIBE INDEXTABLES HISTORY: one row per version, newest first") {
    val rows = spark.sql("DESCRIBE INDEXTABLES HISTORY cmd_t").collect()
    assert(rows.map(_.getAs[Long]("version")).toSeq == Seq(1L, 0L))
    assert(
      rows.head.getAs[String]("operation") == "WRITE" && rows.head.getAs[Long]("files_added") == 1L)
  }

  test("CHECKPOINT INDEXTABLES writes an Avro state checkpoint at the latest version") {
    val rows = spark.sql(s"CHECKPOINT INDEXTABLES '$path'").collect()
    assert(rows.map(_.getAs[Long]("version")).toSeq == Seq(1L))
    val pointer = new java.io.File(path, "_transaction_log/_last_checkpoint")
    val text = new String(java.nio.file.Files.readAllBytes(pointer.toPath), "UTF-8")
    assert(text.contains("\"version\":1") && text.contains("avro-state"), text)
    assert(new java.io.File(
      path,
      "_transaction_log/state-v00000000000000000001/_manifest.avro").isFile)
    assert(spark.read.format("indextables").load(path).count() > 0)
  }

  test("a name that is not an IndexTables table fails clearly") {
    spark.range(1).createOrReplaceTempView("cmd_plain")
    val e = intercept[Exception](spark.sql("DESCRIBE INDEXTABLES STATE cmd_plain").collect())
    assert(e.getMessage.contains("does not name an IndexTables table"), e.getMessage)
  }
}

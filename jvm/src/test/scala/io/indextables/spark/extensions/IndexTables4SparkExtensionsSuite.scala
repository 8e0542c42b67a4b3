package io.indextables.spark.extensions

import java.nio.file.Files

import org.apache.commons.io.FileUtils
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.catalyst.V2IndexQueryExpressionRule
import io.indextables.spark.filters.IndexQueryRegistry

/** The extensions in a session: wiring, and IndexQuery semantics against expected row ids. */
class IndexTables4SparkExtensionsSuite extends AnyFunSuite with BeforeAndAfterAll {
  private var spark: SparkSession = _
  private lazy val scratch = Files.createTempDirectory("indextables-ext").toFile

  private val rows = Seq(
    (1L, "ERROR", "connection timeout after 30s"),
    (2L, "INFO", "block served"),
    (3L, "WARN", "connection reset by peer"),
    (4L, null, "timeout waiting for lock"),
    (5L, "ERROR", null),
    (6L, "INFO", "Timeout OK")
  )

  override def beforeAll(): Unit = {
    super.beforeAll()
    spark = ExtensionsSession.create("extensions")
    val s = spark; import s.implicits._
    rows.toDF("id", "level", "message").write.format("indextables")
      .option("spark.indextables.indexing.typemap.message", "text").save(path("logs"))
    spark.read.format("indextables").load(path("logs")).createOrReplaceTempView("logs")
    Seq((1L, "alpha"), (3L, "beta gamma")).toDF("id", "note").write.format("indextables")
      .option("spark.indextables.indexing.typemap.note", "text").save(path("notes"))
    spark.read.format("indextables").load(path("notes")).createOrReplaceTempView("notes")
    Seq((1L, "x")).toDF("id", "message").createOrReplaceTempView("plain")
  }

  override def afterAll(): Unit = {
    try {
      spark.stop(); SparkSession.clearActiveSession(); SparkSession.clearDefaultSession()
      FileUtils.deleteQuietly(scratch)
    } finally super.afterAll()
  }

  private def path(name: String) = new java.io.File(scratch, name).getAbsolutePath

  private def ids(df: DataFrame): Seq[Long] =
    df.select("id").collect().map(_.getLong(0)).sorted.toSeq

  private def ids(sql: String): Seq[Long] = ids(spark.sql(sql))

  private def scanText(sql: String): String = spark.sql(sql).queryExecution.executedPlan.toString

  test("both rule injections are present in the analyzer and the optimizer") {
    val analyzer = spark.sessionState.analyzer.extendedResolutionRules
    assert(analyzer.exists(_.isInstanceOf[V2IndexQueryExpressionRule]))
    val optimizerRules = spark.sessionState.optimizer.batches.flatMap(_.rules)
    assert(optimizerRules.exists(_.isInstanceOf[V2IndexQueryExpressionRule]))
    assert(spark.sessionState.functionRegistry.functionExists(
      org.apache.spark.sql.catalyst.FunctionIdentifier("tantivy4spark_indexquery")))
  }

  test("indexquery AND a regular predicate: one native query with both") {
    val sql =
      "SELECT id FROM logs WHERE level = 'ERROR' AND message indexquery 'timeout OR connection'"
    assert(ids(sql) == Seq(1L))
    val plan = scanText(sql)
    assert(plan.contains("PushedIndexQuery: [message indexquery 'timeout OR connection']"), plan)
    assert(plan.contains("\"field\":\"level\"") && plan.contains("\"text\":\"timeout\""), plan)
  }

  test("indexquery under OR with a regular predicate") {
    assert(ids("SELECT id FROM logs WHERE level = 'INFO' OR message indexquery 'reset'") == Seq(
      2L,
      3L,
      6L))
  }

  test("NOT over indexquery keeps null messages; NOT over the OR follows three-valued logic") {
    assert(ids("SELECT id FROM logs WHERE NOT message indexquery 'timeout'") == Seq(2L, 3L, 5L))
    // level is null for id 4: level = 'INFO' is null there, so NOT(... OR ...) is null, not TRUE.
    assert(ids("SELECT id FROM logs WHERE NOT (level = 'INFO' OR message indexquery 'timeout')") ==
      Seq(3L, 5L))
  }

  test("temp view, CTE, subquery alias and a join each push to the right scan") {
    assert(
      ids("WITH c AS (SELECT * FROM logs) SELECT id FROM c WHERE message indexquery 'timeout'") ==
        Seq(1L, 4L, 6L))
    assert(ids(
      "SELECT s.id FROM (SELECT id, message AS m FROM logs) s WHERE s.m indexquery 'connection'") ==
      Seq(1L, 3L))
    val join = "SELECT l.id FROM logs l JOIN notes n ON l.id = n.id " +
      "WHERE l.message indexquery 'connection' AND n.note indexquery 'gamma'"
    assert(ids(join) == Seq(3L))
    val plan = scanText(join)
    assert(plan.contains("PushedIndexQuery: [message indexquery 'connection']"), plan)
    assert(plan.contains("PushedIndexQuery: [note indexquery 'gamma']"), plan)
  }

  test("all-fields search (raw string fields match case-sensitively)") {
    assert(ids("SELECT id FROM logs WHERE indexqueryall('ERROR OR reset')") == Seq(1L, 3L, 5L))
    assert(ids("SELECT id FROM logs WHERE _indexall indexquery 'served'") == Seq(2L))
  }

  test("DataFrame expr() with the operator") {
    val df = spark.read.format("indextables").load(path("logs"))
      .filter(org.apache.spark.sql.functions.expr("message indexquery 'lock'"))
    assert(ids(df) == Seq(4L))
  }

  test("indexquery on a table that is not IndexTables fails at analysis") {
    val e = intercept[Exception](spark.sql("SELECT * FROM plain WHERE message indexquery 'x'"))
    assert(e.getMessage.contains("not an IndexTables table"), e.getMessage)
  }

  test("an invalid query fails quoting the query; an empty one never matches everything") {
    for (q <- Seq("(((", "timeout AND", "", "nosuchfield:x")) {
      val e = intercept[Exception](ids(s"SELECT id FROM logs WHERE message indexquery '$q'"))
      assert(e.getMessage.contains(s"Invalid IndexQuery '$q'"), e.getMessage)
    }
  }

  test("textsearch and fieldmatch check the field kind") {
    assert(ids("SELECT id FROM logs WHERE message textsearch 'peer'") == Seq(3L))
    assert(ids("SELECT id FROM logs WHERE level fieldmatch 'WARN'") == Seq(3L))
    val e1 = intercept[Exception](spark.sql("SELECT id FROM logs WHERE level textsearch 'WARN'"))
    assert(e1.getMessage.contains("indexed as 'string'"), e1.getMessage)
    val e2 = intercept[Exception](spark.sql("SELECT id FROM logs WHERE message fieldmatch 'x'"))
    assert(e2.getMessage.contains("indexed as 'text'"), e2.getMessage)
  }

  test("an inexact predicate under OR with an indexquery fails clearly instead of a wrong answer") {
    val e =
      intercept[Exception](ids("SELECT id FROM logs WHERE message = 'x' OR message indexquery 'y'"))
    assert(e.getMessage.contains("cannot answer it exactly"), e.getMessage)
  }

  test("an indexquery across two joined tables under OR fails at planning") {
    val e = intercept[Exception](ids("SELECT l.id FROM logs l JOIN notes n ON l.id = n.id " +
      "WHERE l.message indexquery 'connection' OR n.note indexquery 'gamma'"))
    assert(e.getMessage.contains("could not be pushed"), e.getMessage)
  }

  test("concurrent queries on two threads see only their own filters") {
    val pool = java.util.concurrent.Executors.newFixedThreadPool(2)
    try {
      val tasks = (1 to 20).map { i =>
        pool.submit(new java.util.concurrent.Callable[(Seq[Long], Seq[Long])] {
          def call(): (Seq[Long], Seq[Long]) =
            if (i % 2 == 0)
              (ids("SELECT id FROM logs WHERE message indexquery 'timeout'"), Seq(1L, 4L, 6L))
            else (ids("SELECT id FROM notes WHERE note indexquery 'alpha'"), Seq(1L))
        })
      }
      tasks.foreach { t =>
        val (got, want) = t.get(); assert(got == want)
      }
    } finally pool.shutdown()
    assert(IndexQueryRegistry.lookup("no-such-key").isEmpty)
  }
}

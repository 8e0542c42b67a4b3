package io.indextables.spark.extensions

import java.nio.file.Files

import scala.util.Random

import org.apache.commons.io.FileUtils
import org.apache.spark.sql.catalyst.parser.{CatalystSqlParser, ParseException}
import org.apache.spark.sql.{AnalysisException, SparkSession}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.concurrent.TimeLimits
import org.scalatest.funsuite.AnyFunSuite
import org.scalatest.time.{Seconds, Span}

import io.indextables.spark.core.TableLogResolver
import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.schema.TableIndexing
import io.indextables.spark.filters.{IndexQueryMode, IndexQueryParsing, MixedBooleanFilter}
import io.indextables.spark.sql.{IndexQuerySqlRewriter, IndexTables4SparkSqlParser}

/**
 * Random and malformed IndexQuery strings and SQL texts: each gives a result or a clean error
 * (IndexTablesException, ParseException, AnalysisException), never another exception, a crash of
 * the JVM or a hang.
 */
class IndexQueryFuzzSuite extends AnyFunSuite with BeforeAndAfterAll with TimeLimits {
  private var spark: SparkSession = _
  private lazy val scratch = Files.createTempDirectory("indextables-fuzz").toFile
  private lazy val table = new java.io.File(scratch, "t").getAbsolutePath

  private val pieces = Seq(
    "timeout",
    "connection",
    "ERROR",
    "message:",
    "level:",
    "id:",
    "nosuch:",
    "(",
    ")",
    "\"",
    "'",
    "\\",
    "*",
    "?",
    "~",
    "~2",
    "^2",
    ":",
    "[",
    "]",
    "{",
    "}",
    " TO ",
    " AND ",
    " OR ",
    " NOT ",
    "+",
    "-",
    "!",
    "/",
    "&&",
    "||",
    " ",
    "  ",
    "1",
    "-5",
    "3.5",
    "é",
    "日本",
    "\u0000",
    "\t",
    "\n",
    "IN",
    "[1 TO 5]",
    "{a TO b}",
    "*:*",
    "_exists_:",
    ">",
    "<=",
    "="
  )

  override def beforeAll(): Unit = {
    super.beforeAll()
    spark = ExtensionsSession.create("fuzz")
    val s = spark; import s.implicits._
    Seq(
      (1L, "ERROR", "connection timeout after 30s", 3),
      (2L, "INFO", "block served", 7),
      (3L, null, "timeout waiting", 1)).toDF("id", "level", "message", "n")
      .write.format("indextables").option("spark.indextables.indexing.typemap.message", "text")
      .save(table)
    spark.read.format("indextables").load(table).createOrReplaceTempView("fuzz")
  }

  override def afterAll(): Unit = {
    try {
      spark.stop(); SparkSession.clearActiveSession(); SparkSession.clearDefaultSession()
      FileUtils.deleteQuietly(scratch)
    } finally super.afterAll()
  }

  private def randomQuery(rnd: Random): String =
    if (rnd.nextInt(10) == 0) rnd.nextString(rnd.nextInt(12))
    else Seq.fill(rnd.nextInt(8))(pieces(rnd.nextInt(pieces.size))).mkString

  private def sqlLiteral(q: String): String =
    "'" + q.replace("\\", "\\\\").replace("'", "\\'") + "'"

  test("4000 random query strings parse natively to a query or a clean error quoting them") {
    val snapshot = TableLogResolver.loadExisting(table, Map.empty)
    val schema = TableIndexing.ofTable(snapshot)
    val mapping = TableIndexing.unionMapping(snapshot)
    val rnd = new Random(5)
    var ok = 0
    var rejected = 0
    failAfter(Span(240, Seconds)) {
      (1 to 4000).foreach { _ =>
        val q = randomQuery(rnd)
        val filter = if (rnd.nextBoolean())
          MixedBooleanFilter.IndexQueryFilter("message", q, IndexQueryMode.IndexQuery)
        else MixedBooleanFilter.IndexQueryAllFilter(q)
        try { IndexQueryParsing.toQuery(filter, schema, mapping, table); ok += 1 }
        catch {
          case e: IndexTablesException =>
            assert(e.getMessage.contains(s"'$q'"), e.getMessage); rejected += 1
        }
      }
    }
    assert(ok > 100 && rejected > 100, s"ok $ok, rejected $rejected")
  }

  test("300 random query strings run end to end in SQL: rows or a clean error") {
    val rnd = new Random(11)
    var results = 0
    failAfter(Span(400, Seconds)) {
      (1 to 300).foreach { _ =>
        val q = randomQuery(rnd)
        val sql = if (rnd.nextBoolean())
          s"SELECT id FROM fuzz WHERE message indexquery ${sqlLiteral(q)}"
        else s"SELECT id FROM fuzz WHERE level = 'INFO' OR NOT indexqueryall(${sqlLiteral(q)})"
        try { val n = spark.sql(sql).collect().length; assert(n <= 3); results += 1 }
        catch {
          case _: IndexTablesException | _: ParseException | _: AnalysisException =>
          case e: org.apache.spark.SparkException
              if Option(e.getCause).exists(_.isInstanceOf[IndexTablesException]) =>
        }
      }
    }
    assert(results > 20)
  }

  test("5000 random SQL texts around the operators: the rewriter never throws or hangs") {
    val sqlPieces = Seq(
      "SELECT",
      " * ",
      "FROM t",
      " WHERE ",
      "m",
      "a.b",
      "`x y`",
      " indexquery ",
      " INDEXQUERY ",
      " textsearch ",
      " fieldmatch ",
      "_indexall",
      "indexqueryall(",
      ")",
      "(",
      "'q'",
      "'a''b'",
      "\"d\"",
      "'un",
      "`un",
      "--c\n",
      "/* c */",
      "/*",
      "*/",
      " AND ",
      " OR ",
      " NOT ",
      ",",
      ".",
      "\\",
      "'\\''",
      " ",
      "\n"
    )
    val parser = new IndexTables4SparkSqlParser(CatalystSqlParser)
    val rnd = new Random(17)
    failAfter(Span(240, Seconds)) {
      (1 to 5000).foreach { _ =>
        val sql = Seq.fill(rnd.nextInt(14))(sqlPieces(rnd.nextInt(sqlPieces.size))).mkString
        IndexQuerySqlRewriter.rewrite(sql)
        try parser.parsePlan(sql)
        catch { case _: ParseException | _: IndexTablesException => }
      }
    }
  }
}

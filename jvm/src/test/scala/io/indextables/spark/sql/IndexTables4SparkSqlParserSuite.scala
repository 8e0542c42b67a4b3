package io.indextables.spark.sql

import org.apache.spark.sql.catalyst.parser.CatalystSqlParser
import org.scalatest.funsuite.AnyFunSuite

/** The delegating parser, without a session: each form parses to the plan of its rewrite. */
class IndexTables4SparkSqlParserSuite extends AnyFunSuite {
  private val parser = new IndexTables4SparkSqlParser(CatalystSqlParser)

  private def assertPlan(sql: String, expected: String): Unit = {
    assert(IndexQuerySqlRewriter.rewrite(sql) == expected)
    assert(parser.parsePlan(sql) == CatalystSqlParser.parsePlan(expected))
  }

  private def unchanged(sql: String): Unit = assert(IndexQuerySqlRewriter.rewrite(sql) == sql)

  test("col indexquery 'q' becomes tantivy4spark_indexquery(col, 'q')") {
    assertPlan(
      "SELECT * FROM t WHERE message indexquery 'timeout OR connection'",
      "SELECT * FROM t WHERE tantivy4spark_indexquery(message, 'timeout OR connection')"
    )
  }

  test("qualified and backquoted columns keep their reference") {
    assertPlan(
      "SELECT * FROM t a WHERE a.message indexquery 'x'",
      "SELECT * FROM t a WHERE tantivy4spark_indexquery(a.message, 'x')")
    assertPlan(
      "SELECT * FROM t WHERE `my col` INDEXQUERY 'x'",
      "SELECT * FROM t WHERE tantivy4spark_indexquery(`my col`, 'x')")
    assertPlan(
      "SELECT * FROM t WHERE db.t.`a``b` indexquery 'x'",
      "SELECT * FROM t WHERE tantivy4spark_indexquery(db.t.`a``b`, 'x')")
  }

  test("all-fields forms: _indexall indexquery 'q' and indexqueryall('q')") {
    assertPlan(
      "SELECT * FROM t WHERE _indexall indexquery 'error'",
      "SELECT * FROM t WHERE tantivy4spark_indexqueryall('error')")
    assertPlan(
      "SELECT * FROM t WHERE indexqueryall('error') AND id > 3",
      "SELECT * FROM t WHERE tantivy4spark_indexqueryall('error') AND id > 3")
    assertPlan(
      "SELECT * FROM t WHERE IndexQueryAll ( 'error' )",
      "SELECT * FROM t WHERE tantivy4spark_indexqueryall ( 'error' )")
  }

  test("textsearch and fieldmatch forms") {
    assertPlan(
      "SELECT * FROM t WHERE message TEXTSEARCH 'timeout' AND level FieldMatch 'ERROR'",
      "SELECT * FROM t WHERE tantivy4spark_textsearch(message, 'timeout') AND " +
        "tantivy4spark_fieldmatch(level, 'ERROR')"
    )
  }

  test("keywords are case-insensitive") {
    for (kw <- Seq("indexquery", "INDEXQUERY", "IndexQuery", "iNdExQuErY")) {
      assertPlan(
        s"SELECT * FROM t WHERE m $kw 'x'",
        "SELECT * FROM t WHERE tantivy4spark_indexquery(m, 'x')")
    }
  }

  test(
    "quoting follows Spark: adjacent quotes, backslash escapes, double quotes, adjacent literals") {
    assertPlan(
      "SELECT * FROM t WHERE m indexquery 'it''s'",
      "SELECT * FROM t WHERE tantivy4spark_indexquery(m, 'it''s')")
    assertPlan(
      "SELECT * FROM t WHERE m indexquery 'say \\'hi\\' indexquery'",
      "SELECT * FROM t WHERE tantivy4spark_indexquery(m, 'say \\'hi\\' indexquery')")
    assertPlan(
      "SELECT * FROM t WHERE m indexquery '\"connection reset\"'",
      "SELECT * FROM t WHERE tantivy4spark_indexquery(m, '\"connection reset\"')")
    assertPlan(
      "SELECT * FROM t WHERE m indexquery \"a 'b'\"",
      "SELECT * FROM t WHERE tantivy4spark_indexquery(m, \"a 'b'\")")
    assertPlan(
      "SELECT * FROM t WHERE m indexquery 'a' ' OR b'",
      "SELECT * FROM t WHERE tantivy4spark_indexquery(m, 'a' ' OR b')")
  }

  test("the query string reaches the function unescaped by Spark's rules") {
    val plan = parser.parsePlan("SELECT * FROM t WHERE m indexquery 'it''s \\'x\\''")
    // Spark 3.5 reads 'it''s' as the adjacent literals 'it' and 's'; the operand is the whole run.
    assert(plan.toString.contains("its 'x'"))
  }

  test("operators inside string literals, identifiers and comments are left alone") {
    unchanged("SELECT 'a indexquery ''b''' FROM t")
    unchanged("SELECT \"m indexquery 'x'\" FROM t")
    unchanged("SELECT `m indexquery 'x'` FROM t")
    unchanged("SELECT * FROM t -- WHERE m indexquery 'x'\n")
    unchanged("SELECT * FROM t /* m indexquery 'x' /* nested */ indexqueryall('y') */")
    unchanged("SELECT indexquery_col FROM t WHERE my_indexquery = 'x'")
    assertPlan(
      "SELECT 'm indexquery' FROM t /* c */ WHERE m indexquery 'x' -- m indexquery 'y'",
      "SELECT 'm indexquery' FROM t /* c */ WHERE tantivy4spark_indexquery(m, 'x') -- m indexquery 'y'"
    )
  }

  test("comments between the operands go, the operands stay") {
    assertPlan(
      "SELECT * FROM t WHERE m /* c */ indexquery -- c\n 'x'",
      "SELECT * FROM t WHERE tantivy4spark_indexquery(m, 'x')")
  }

  test("OR, NOT and several operators in one statement") {
    assertPlan(
      "SELECT * FROM t WHERE NOT (m indexquery 'a') OR (level = 'ERROR' AND m indexquery 'b')",
      "SELECT * FROM t WHERE NOT (tantivy4spark_indexquery(m, 'a')) OR " +
        "(level = 'ERROR' AND tantivy4spark_indexquery(m, 'b'))"
    )
  }

  test("CTEs, subqueries and joins") {
    assertPlan(
      "WITH c AS (SELECT * FROM t WHERE m indexquery 'a') SELECT * FROM c JOIN u ON c.id = u.id " +
        "WHERE u.msg indexquery 'b'",
      "WITH c AS (SELECT * FROM t WHERE tantivy4spark_indexquery(m, 'a')) SELECT * FROM c JOIN u " +
        "ON c.id = u.id WHERE tantivy4spark_indexquery(u.msg, 'b')"
    )
  }

  test("parseExpression rewrites too, for DataFrame expr()") {
    assert(parser.parseExpression("message indexquery 'x'") ==
      CatalystSqlParser.parseExpression("tantivy4spark_indexquery(message, 'x')"))
  }

  test("statements without our operators are not touched") {
    val sql = "SELECT a, 'x' FROM t WHERE b = 1"
    assert(IndexQuerySqlRewriter.rewrite(sql) eq sql)
    assert(parser.parsePlan(sql) == CatalystSqlParser.parsePlan(sql))
  }

  test("an operator without a string literal or a column is left for Spark to reject") {
    unchanged("SELECT * FROM t WHERE m indexquery x")
    unchanged("SELECT * FROM t WHERE indexquery 'x'")
    intercept[Exception](parser.parsePlan("SELECT * FROM t WHERE m indexquery x"))
  }

  test("an unterminated literal or comment does not hang or throw in the rewriter") {
    unchanged("SELECT 'm indexquery 'x")
    unchanged("SELECT /* m indexquery 'x'")
    assert(IndexQuerySqlRewriter.rewrite("m indexquery 'x") == "m indexquery 'x")
  }
}

package io.indextables.spark.sql

import org.apache.spark.sql.catalyst.parser.CatalystSqlParser
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.sql.commands.IndexTablesCommandTarget.{TableName, TablePath}
import io.indextables.spark.sql.commands._

/** The command grammar, without a session. */
class IndexTablesCommandParserSuite extends AnyFunSuite {
  private val parser = new IndexTables4SparkSqlParser(CatalystSqlParser)

  test("every command, with a path and with a table name, INDEXTABLES or TANTIVY4SPARK") {
    for (kw <- Seq("INDEXTABLES", "tantivy4spark", "IndexTables")) {
      assert(parser.parsePlan(s"CHECKPOINT $kw '/t/a'") == CheckpointIndexTablesCommand(
        TablePath("/t/a")))
      assert(parser.parsePlan(s"describe $kw state db.logs") ==
        DescribeIndexTablesStateCommand(TableName(Seq("db", "logs"))))
      assert(parser.parsePlan(s"""DESCRIBE $kw TRANSACTION LOG "s3://b/t";""") ==
        DescribeIndexTablesTransactionLogCommand(TablePath("s3://b/t")))
      assert(parser.parsePlan(s"DESC $kw HISTORY `my table`") ==
        DescribeIndexTablesHistoryCommand(TableName(Seq("my table"))))
    }
  }

  test("comments, whitespace and escapes in the path") {
    assert(parser.parsePlan("/* c */ CHECKPOINT\n  INDEXTABLES -- c\n 'a\\'b'") ==
      CheckpointIndexTablesCommand(TablePath("a'b")))
  }

  test("a malformed command fails with an error naming the position") {
    val e = intercept[IndexTablesException](parser.parsePlan("DESCRIBE INDEXTABLES STATUS '/t'"))
    assert(e.getMessage.contains("Syntax error in IndexTables command"), e.getMessage)
    intercept[IndexTablesException](parser.parsePlan("CHECKPOINT INDEXTABLES"))
    intercept[IndexTablesException](parser.parsePlan("CHECKPOINT INDEXTABLES '/a' extra"))
  }

  test("other DESCRIBE statements go to Spark") {
    // DescribeRelation's output carries fresh expression ids, so compare the plans' shapes.
    def shape(sql: String) = parser.parsePlan(sql).toString.replaceAll("#\\d+", "")
    def sparkShape(sql: String) = CatalystSqlParser.parsePlan(sql).toString.replaceAll("#\\d+", "")
    assert(shape("DESCRIBE TABLE t") == sparkShape("DESCRIBE TABLE t"))
    assert(shape("DESCRIBE indextables_t") == sparkShape("DESCRIBE indextables_t"))
    assert(!IndexTablesCommandParser.isCommand("SELECT 'CHECKPOINT INDEXTABLES'"))
  }
}

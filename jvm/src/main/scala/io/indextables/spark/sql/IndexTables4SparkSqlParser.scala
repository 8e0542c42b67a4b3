package io.indextables.spark.sql

import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.catalyst.parser.ParserInterface
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.indextables.SparkLineShim
import org.apache.spark.sql.catalyst.{FunctionIdentifier, TableIdentifier}
import org.apache.spark.sql.types.{DataType, StructType}

/**
 * The session's SQL parser with IndexTables syntax. IndexTables commands (CHECKPOINT / DESCRIBE
 * INDEXTABLES ...) are parsed by the generated grammar, see [[IndexTablesCommandParser]].
 * Statements and expressions that may hold an
 * IndexQuery operator (a cheap text check decides) are rewritten by [[IndexQuerySqlRewriter]] and
 * then parsed by Spark's parser; everything else goes to Spark's parser untouched. Stateless
 * apart from the delegate; thread-safe as Spark's parser is.
 */
class IndexTables4SparkSqlParser(delegate: ParserInterface) extends ParserInterface {

  private def rewrite(sqlText: String): String = IndexQuerySqlRewriter.rewrite(sqlText)

  override def parsePlan(sqlText: String): LogicalPlan =
    if (IndexTablesCommandParser.isCommand(sqlText)) IndexTablesCommandParser.parse(sqlText)
    else delegate.parsePlan(rewrite(sqlText))

  override def parseQuery(sqlText: String): LogicalPlan = delegate.parseQuery(rewrite(sqlText))

  override def parseExpression(sqlText: String): Expression =
    delegate.parseExpression(rewrite(sqlText))

  override def parseTableIdentifier(sqlText: String): TableIdentifier =
    delegate.parseTableIdentifier(sqlText)

  override def parseFunctionIdentifier(sqlText: String): FunctionIdentifier =
    delegate.parseFunctionIdentifier(sqlText)

  override def parseMultipartIdentifier(sqlText: String): Seq[String] =
    delegate.parseMultipartIdentifier(sqlText)

  override def parseTableSchema(sqlText: String): StructType = delegate.parseTableSchema(sqlText)

  override def parseDataType(sqlText: String): DataType = delegate.parseDataType(sqlText)

  // Spark 4's, not Spark 3.5's: so no `override`.
  def parseRoutineParam(sqlText: String): StructType =
    SparkLineShim.parseRoutineParam(delegate, sqlText)
}

package io.indextables.spark.expressions

import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo}
import org.apache.spark.sql.types.StringType
import org.apache.spark.unsafe.types.UTF8String

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.filters.IndexQueryMode

/**
 * The SQL functions behind the IndexQuery operators, as (name, info, builder) triples that
 * `SparkSessionExtensions.injectFunction` takes. The query argument must be a string literal.
 */
object IndexQueryFunctions {

  // The names the SQL operators are rewritten to (see sql.IndexQuerySqlRewriter).
  val IndexQueryFunction = "tantivy4spark_indexquery"
  val IndexQueryAllFunction = "tantivy4spark_indexqueryall"
  val TextSearchFunction = "tantivy4spark_textsearch"
  val FieldMatchFunction = "tantivy4spark_fieldmatch"

  type Builder = Seq[Expression] => Expression

  val all: Seq[(FunctionIdentifier, ExpressionInfo, Builder)] = Seq(
    columnFunction(IndexQueryFunction, IndexQueryMode.IndexQuery),
    columnFunction(TextSearchFunction, IndexQueryMode.TextSearch),
    columnFunction(FieldMatchFunction, IndexQueryMode.FieldMatch),
    (
      FunctionIdentifier(IndexQueryAllFunction),
      info(
        IndexQueryAllFunction,
        classOf[IndexQueryAllExpression],
        "_FUNC_('query') - TRUE where the tantivy query matches any string or text field."),
      (args: Seq[Expression]) =>
        args match {
          case Seq(q) => IndexQueryAllExpression(literal(IndexQueryAllFunction, q))
          case _ => throw IndexTablesErrors.indexQueryArguments(IndexQueryAllFunction, 1, args.size)
        })
  )

  private def columnFunction(
      name: String,
      mode: IndexQueryMode): (FunctionIdentifier, ExpressionInfo, Builder) = (
    FunctionIdentifier(name),
    info(
      name,
      classOf[IndexQueryExpression],
      s"_FUNC_(column, 'query') - TRUE where the tantivy query matches, searched in column " +
        s"(SQL: column ${mode.operator} 'query')."
    ),
    (args: Seq[Expression]) =>
      args match {
        case Seq(col, q) => IndexQueryExpression(col, literal(name, q), mode)
        case _ => throw IndexTablesErrors.indexQueryArguments(name, 2, args.size)
      })

  private def info(name: String, cls: Class[_], usage: String): ExpressionInfo =
    new ExpressionInfo(cls.getCanonicalName, null, name, usage, "", "", "", "", "", "", "")

  private def literal(function: String, e: Expression): String = {
    if (!e.foldable || e.dataType != StringType)
      throw IndexTablesErrors.indexQueryNotLiteral(function, e.sql)
    e.eval() match {
      case s: UTF8String => s.toString
      case _ => throw IndexTablesErrors.indexQueryNotLiteral(function, e.sql)
    }
  }
}

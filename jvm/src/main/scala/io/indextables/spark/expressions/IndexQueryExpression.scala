package io.indextables.spark.expressions

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.codegen.CodegenFallback
import org.apache.spark.sql.catalyst.expressions.{Expression, LeafExpression, Predicate, UnaryExpression}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.filters.IndexQueryMode

/**
 * `child <mode> 'query'`: TRUE when the IndexTables document of the row matches the tantivy
 * query, with `child` (a column of an IndexTables table) as the default field. It cannot be
 * evaluated row by row: V2IndexQueryExpressionRule moves it, with the boolean tree around it, into
 * the table's scan. Evaluating one that was not moved fails with an error naming it.
 */
final case class IndexQueryExpression(child: Expression, query: String, mode: IndexQueryMode)
    extends UnaryExpression with Predicate with CodegenFallback {

  override def nullable: Boolean = false

  override def foldable: Boolean = false

  override def eval(input: InternalRow): Any = throw IndexTablesErrors.indexQueryNotPushed(sql)

  override def sql: String = s"(${child.sql} ${mode.operator} '${escape(query)}')"

  override def toString: String = s"$child ${mode.operator} '$query'"

  private def escape(s: String): String = s.replace("\\", "\\\\").replace("'", "\\'")

  override protected def withNewChildInternal(newChild: Expression): IndexQueryExpression =
    copy(child = newChild)
}

/**
 * `indexqueryall('query')`: TRUE when the row's document matches the query searched over every
 * string and text field of the one IndexTables table below it. Like [[IndexQueryExpression]], it
 * only ever runs inside the scan.
 */
final case class IndexQueryAllExpression(query: String)
    extends LeafExpression with Predicate with CodegenFallback {

  override def nullable: Boolean = false

  override def foldable: Boolean = false

  override def eval(input: InternalRow): Any = throw IndexTablesErrors.indexQueryNotPushed(sql)

  override def sql: String = s"indexqueryall('${query.replace("\\", "\\\\").replace("'", "\\'")}')"

  override def toString: String = s"indexqueryall('$query')"
}

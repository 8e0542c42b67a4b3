package io.indextables.spark.catalyst

import org.apache.spark.sql.catalyst.expressions.{Attribute, Expression}
import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, WithCTE}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.types.StringType

import io.indextables.spark.expressions.{IndexTablesSnippet, SnippetQuery}
import io.indextables.spark.schema.{IndexKind, IndexedField}
import io.indextables.spark.write.DocumentSplitWriter

/**
 * Prepares every `indextables_snippet` once its column resolves: when the column is read
 * (through aliases, views, CTEs and projections) from an IndexTables table, its value is
 * matched as that table's field, cut by the field's tokenizer (a `text` column's own, `raw` for
 * an exact string), and the query is parsed with the table's schema (so it may name the table's
 * other fields, whose clauses do not mark this column); any other string is matched as a
 * `default`-tokenized field named as the column. Parsing here, on the driver, makes a malformed
 * query fail analysis (INDEXTABLES_INVALID_INDEXQUERY) and spares the executors a parse.
 */
object SnippetPreparation extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan = {
    lazy val ctes: Map[Long, LogicalPlan] = plan.collect { case w: WithCTE => w.cteDefs }.flatten
      .map(d => d.id -> d.child).toMap
    plan.transformUpWithSubqueries {
      case node if node.childrenResolved && node.expressions.exists(unprepared) =>
        node.transformExpressionsUp {
          case s: IndexTablesSnippet if s.prepared.isEmpty && s.child.resolved =>
            s.copy(prepared = Some(prepare(s, node, ctes)))
        }
    }
  }

  private def unprepared(e: Expression): Boolean = e.exists {
    case s: IndexTablesSnippet => s.prepared.isEmpty && s.child.resolved
    case _ => false
  }

  private def prepare(
      s: IndexTablesSnippet,
      node: LogicalPlan,
      ctes: Map[Long, LogicalPlan]): SnippetQuery = {
    val source = s.child match {
      case a: Attribute =>
        node.children.view.flatMap(c => V2IndexQueryExpressionRule.source(c, a.exprId, ctes))
          .headOption
      case _ => None
    }
    source match {
      case Some((r: DataSourceV2Relation, name))
          if V2IndexQueryExpressionRule.indexTable(r).isDefined =>
        val schema = V2IndexQueryExpressionRule.indexTable(r).get.indexSchema
        val field = schema.field(name).getOrElse(
          // A partition column: exact values.
          IndexedField(name, StringType, IndexKind.RawString))
        val tokenizer = field.kind match {
          case IndexKind.Text => field.tokenizer.getOrElse("default")
          case IndexKind.RawString | IndexKind.Ip => "raw"
          case _ => "default"
        }
        val fields = schema.fields.filterNot(_.name == name) :+ field
        SnippetQuery.parse(
          s.query,
          name,
          tokenizer,
          DocumentSplitWriter.buildSchema(fields),
          fields.map(_.name).toSet)
      case _ => SnippetQuery.parseStandalone(s.query, s.defaultField, "default")
    }
  }
}

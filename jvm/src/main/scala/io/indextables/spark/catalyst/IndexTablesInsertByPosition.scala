package io.indextables.spark.catalyst

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.{Alias, Cast, NamedExpression}
import org.apache.spark.sql.catalyst.plans.logical.{AppendData, LogicalPlan, OverwriteByExpression, OverwritePartitionsDynamic, Project}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.indextables.SparkLineShim

import io.indextables.spark.core.IndexTables4SparkTable

/**
 * Lines up the columns of an INSERT by position (`INSERT INTO t VALUES ...`, `INSERT [OVERWRITE]
 * t SELECT ...`) with the IndexTables table's columns: the i-th column of the query takes the
 * name, and is cast to the type, of the table's i-th column. Spark does this itself only for
 * tables without ACCEPT_ANY_SCHEMA, which IndexTables tables declare so that by-name writes may
 * add columns (mergeSchema); as Delta does, the plugin then lines up by-position writes itself.
 * A query with another number of columns is left alone, and the write names what is missing.
 */
case class IndexTablesInsertByPosition(session: SparkSession) extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperators {
    case a: AppendData if !a.isByName && needsProjection(a.table, a.query) =>
      SparkLineShim.withQuery(a, project(a.table, a.query))
    case o: OverwriteByExpression if !o.isByName && needsProjection(o.table, o.query) =>
      SparkLineShim.withQuery(o, project(o.table, o.query))
    case o: OverwritePartitionsDynamic if !o.isByName && needsProjection(o.table, o.query) =>
      SparkLineShim.withQuery(o, project(o.table, o.query))
  }

  private def ours(table: LogicalPlan): Boolean = table match {
    case r: DataSourceV2Relation => r.table.isInstanceOf[IndexTables4SparkTable]
    case _ => false
  }

  private def needsProjection(table: LogicalPlan, query: LogicalPlan): Boolean =
    ours(table) && table.resolved && query.resolved &&
      table.output.size == query.output.size &&
      table.output.zip(query.output).exists { case (t, q) =>
        t.name != q.name || t.dataType != q.dataType
      }

  private def project(table: LogicalPlan, query: LogicalPlan): LogicalPlan = {
    val zone = Some(session.sessionState.conf.sessionLocalTimeZone)
    val columns = table.output.zip(query.output).map { case (t, q) =>
      val value = if (t.dataType == q.dataType) q else Cast(q, t.dataType, zone)
      Alias(value, t.name)(): NamedExpression
    }
    Project(columns, query)
  }
}

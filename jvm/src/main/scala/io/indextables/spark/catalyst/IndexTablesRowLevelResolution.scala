package io.indextables.spark.catalyst

import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, MergeIntoTable, UpdateTable}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.indextables.SparkLineShim

import io.indextables.spark.core.IndexTables4SparkTable

/**
 * A resolution rule for UPDATE and MERGE INTO on an IndexTables table: the target relation's
 * table becomes [[IndexTables4SparkTable.forRowLevelCommand]], without ACCEPT_ANY_SCHEMA, under
 * which Spark 3.5 would leave the statement unresolved (MERGE's misleading `UNRESOLVED_COLUMN`
 * on the target's columns, UPDATE's "not supported temporarily"). Spark then resolves the
 * assignments (`SET *`, `INSERT *` included) against the table's columns and rewrites the
 * statement into a row-level write. Idempotent: a target already changed is left alone.
 */
object IndexTablesRowLevelResolution extends Rule[LogicalPlan] {

  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperators {
    case u: UpdateTable if needsTarget(u.table) => u.copy(table = target(u.table))
    case m: MergeIntoTable if needsTarget(m.targetTable) =>
      m.copy(targetTable = target(m.targetTable))
  }

  private def ours(r: DataSourceV2Relation): Option[IndexTables4SparkTable] = r.table match {
    case t: IndexTables4SparkTable if t.acceptsAnySchema => Some(t)
    case _ => None
  }

  private def needsTarget(p: LogicalPlan): Boolean =
    p.exists { case r: DataSourceV2Relation => ours(r).isDefined; case _ => false }

  private def target(p: LogicalPlan): LogicalPlan = p.transform {
    case r: DataSourceV2Relation if ours(r).isDefined =>
      SparkLineShim.withTable(r, ours(r).get.forRowLevelCommand)
  }
}

package io.indextables.spark.catalyst

import org.apache.spark.sql.catalyst.plans.logical.{LogicalPlan, RowLevelWrite}
import org.apache.spark.sql.execution.{SparkPlan, SparkStrategy}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.expressions.{IndexQueryAllExpression, IndexQueryExpression}

/**
 * A planner strategy that plans nothing: it fails planning, with an error naming the predicate,
 * when an IndexQuery predicate is left in the optimized plan (it could not be moved into a scan,
 * e.g. an OR across two joined tables), rather than failing later inside a task.
 */
object IndexQueryPlanCheck extends SparkStrategy {
  override def apply(plan: LogicalPlan): Seq[SparkPlan] = {
    // A row-level write keeps its statement's condition for show; its scan holds the query.
    if (!plan.isInstanceOf[RowLevelWrite]) plan.expressions.foreach { e =>
      e.find {
        case _: IndexQueryExpression | _: IndexQueryAllExpression => true
        case _ => false
      }.foreach(iq => throw IndexTablesErrors.indexQueryNotPushed(iq.sql))
    }
    Nil
  }
}

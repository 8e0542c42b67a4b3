package io.indextables.spark.catalyst

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.streaming.WriteToStream

import io.indextables.spark.core.IndexTables4SparkTable

/**
 * Checks a streaming query into a catalog table when it starts (`toTable` analyzes the query
 * before its first batch): its output mode ([[IndexTables4SparkTable.checkStreamingSink]]).
 * Without it Spark would refuse the `update` mode only at the first batch, in its own words. A
 * stream into a path is checked by its sink as Spark creates it
 * ([[io.indextables.spark.core.IndexTablesStreamSink]]). Stateless.
 */
object StreamingSinkCheck extends (LogicalPlan => Unit) {
  override def apply(plan: LogicalPlan): Unit = plan.foreach {
    case w: WriteToStream =>
      w.sink match {
        case table: IndexTables4SparkTable => table.checkStreamingSink(w.outputMode)
        case _ =>
      }
    case _ =>
  }
}

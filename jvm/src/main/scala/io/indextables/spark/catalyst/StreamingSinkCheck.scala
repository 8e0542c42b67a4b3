package io.indextables.spark.catalyst

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.streaming.WriteToStream

import io.indextables.spark.core.IndexTables4SparkTable

/**
 * Checks a streaming query into an IndexTables table when it starts (`writeStream.start` and
 * `toTable` analyze the query before its first batch): the output mode and, for a path sink,
 * the options ([[IndexTables4SparkTable.checkStreamingSink]]). Without it Spark would refuse
 * the `update` mode only at the first batch, in its own words. Stateless.
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

package io.indextables.spark.catalyst

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.execution.LeafExecNode
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

/**
 * The final rows of a scan the driver answered (an aggregation from the log, or a small search
 * or top-k the driver read), as a physical leaf: collecting it returns them without a job (as
 * Spark's LocalTableScanExec does); only a parent that needs an RDD gets one of a single
 * partition. EXPLAIN shows the scan's description.
 *
 * @param rows unsafe rows of `output`
 */
final case class IndexTablesLocalScanExec(
    output: Seq[Attribute],
    rows: Seq[InternalRow],
    description: String)
    extends LeafExecNode {

  override lazy val metrics: Map[String, SQLMetric] =
    Map("numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of output rows"))

  override def nodeName: String = "IndexTablesLocalScan"

  override def simpleString(maxFields: Int): String = s"$nodeName $description"

  protected override def doExecute(): RDD[InternalRow] = {
    metrics("numOutputRows").add(rows.size)
    sparkContext.parallelize(rows, 1)
  }

  override def executeCollect(): Array[InternalRow] = {
    metrics("numOutputRows").add(rows.size)
    rows.toArray
  }

  override def executeTake(limit: Int): Array[InternalRow] = counted(rows.take(limit))

  override def executeTail(limit: Int): Array[InternalRow] = counted(rows.takeRight(limit))

  private def counted(taken: Seq[InternalRow]): Array[InternalRow] = {
    metrics("numOutputRows").add(taken.size)
    taken.toArray
  }
}

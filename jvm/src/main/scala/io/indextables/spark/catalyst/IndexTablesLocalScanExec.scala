package io.indextables.spark.catalyst

import org.apache.spark.rdd.RDD
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Attribute
import org.apache.spark.sql.connector.metric.CustomMetric
import org.apache.spark.sql.execution.{LeafExecNode, SQLExecution}
import org.apache.spark.sql.execution.metric.{SQLMetric, SQLMetrics}

/**
 * The final rows of a scan the driver answered (an aggregation from the log, or a small search
 * or top-k the driver read), as a physical leaf: collecting it returns them without a job (as
 * Spark's LocalTableScanExec does); only a parent that needs an RDD gets one of a single
 * partition. EXPLAIN shows the scan's description. The scan's custom metrics (what planning
 * pruned, and what the driver's reads did: `metrics/ScanMetrics`) show in the SQL tab as a
 * scan's do, posted when the node runs.
 *
 * @param rows unsafe rows of `output`
 * @param scanMetrics the scan's custom metrics, each with its value
 */
final case class IndexTablesLocalScanExec(
    output: Seq[Attribute],
    rows: Seq[InternalRow],
    description: String,
    scanMetrics: Seq[(CustomMetric, Long)] = Nil)
    extends LeafExecNode {

  override lazy val metrics: Map[String, SQLMetric] =
    Map("numOutputRows" -> SQLMetrics.createMetric(sparkContext, "number of output rows")) ++
      scanMetrics.map { case (m, _) => m.name -> SQLMetrics.createV2CustomMetric(sparkContext, m) }

  // Once per node: the driver did the reads before the plan ran.
  @transient private lazy val posted: Unit = {
    val updated = scanMetrics.map { case (m, v) =>
      val metric = metrics(m.name)
      metric.set(v)
      metric
    }
    if (updated.nonEmpty) SQLMetrics.postDriverMetricUpdates(
      sparkContext,
      sparkContext.getLocalProperty(SQLExecution.EXECUTION_ID_KEY),
      updated)
  }

  override def nodeName: String = "IndexTablesLocalScan"

  override def simpleString(maxFields: Int): String = s"$nodeName $description"

  protected override def doExecute(): RDD[InternalRow] = {
    posted
    metrics("numOutputRows").add(rows.size)
    sparkContext.parallelize(rows, 1)
  }

  override def executeCollect(): Array[InternalRow] = {
    posted
    metrics("numOutputRows").add(rows.size)
    rows.toArray
  }

  override def executeTake(limit: Int): Array[InternalRow] = counted(rows.take(limit))

  override def executeTail(limit: Int): Array[InternalRow] = counted(rows.takeRight(limit))

  private def counted(taken: Seq[InternalRow]): Array[InternalRow] = {
    posted
    metrics("numOutputRows").add(taken.size)
    taken.toArray
  }
}

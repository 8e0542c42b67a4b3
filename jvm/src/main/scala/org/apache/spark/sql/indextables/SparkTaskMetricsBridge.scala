package org.apache.spark.sql.indextables

import org.apache.spark.TaskContext

/**
 * The running task's output metrics, which Spark's DataSource V2 write task leaves at zero:
 * each split a write task finishes adds its bytes and rows at once, so the Spark UI shows a
 * task's output growing as its splits are uploaded. The setters are Spark-internal, hence this
 * package. Executor side.
 */
object SparkTaskMetricsBridge {

  def addOutput(bytes: Long, records: Long): Unit = Option(TaskContext.get()).foreach { tc =>
    val out = tc.taskMetrics().outputMetrics
    out.setBytesWritten(out.bytesWritten + bytes)
    out.setRecordsWritten(out.recordsWritten + records)
  }

  /** Bytes the running task has read from shuffles (what AQE sizes its partitions by). */
  def shuffleBytesRead: Long =
    Option(TaskContext.get()).map(_.taskMetrics().shuffleReadMetrics.totalBytesRead).getOrElse(0L)
}

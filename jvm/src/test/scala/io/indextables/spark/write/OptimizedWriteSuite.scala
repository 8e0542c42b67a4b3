package io.indextables.spark.write

import java.io.File

import scala.collection.mutable.ArrayBuffer

import org.apache.commons.io.FileUtils
import org.apache.spark.scheduler.{SparkListener, SparkListenerTaskEnd}
import org.apache.spark.sql.execution.QueryExecution
import org.apache.spark.sql.util.QueryExecutionListener

import io.indextables.spark.IndexTablesTestBase

/**
 * What an optimized write asks of Spark, seen in the executed plan of the write: the shuffle
 * (hash: a rebalance on the partition columns or the first column, with the advisory size in
 * the write's description; balanced: a range shuffle into defaultParallelism partitions; none
 * and disabled: no shuffle), and the task output metrics each uploaded split adds to.
 */
class OptimizedWriteSuite extends IndexTablesTestBase {

  private val prefix = "spark.indextables.write.optimizeWrite."

  /** The executed plan of the write `run` makes, as text. */
  private def writePlan(run: => Unit): String = {
    val plans = ArrayBuffer.empty[String]
    val listener = new QueryExecutionListener {
      override def onSuccess(name: String, qe: QueryExecution, ns: Long): Unit =
        if (qe.executedPlan.toString.contains("IndexTablesWrite")) plans.synchronized {
          plans += qe.executedPlan.toString
        }
      override def onFailure(name: String, qe: QueryExecution, e: Exception): Unit = ()
    }
    spark.listenerManager.register(listener)
    try {
      run
      eventually(plans.synchronized(plans.nonEmpty))
    } finally spark.listenerManager.unregister(listener)
    plans.synchronized(plans.last)
  }

  /** Waits (listeners hear of events asynchronously) up to ten seconds for `done`. */
  private def eventually(done: => Boolean): Unit = {
    val deadline = System.nanoTime() + 10000000000L
    while (!done) {
      assert(System.nanoTime() < deadline, "timed out waiting for a listener event")
      Thread.sleep(20)
    }
  }

  private def data(rows: Long, partitions: Int) =
    spark.range(0, rows, 1, partitions)
      .selectExpr("id", "cast(id % 5 as string) as day", "concat('msg ', id) as message")

  private def write(path: String, mode: String, partitioned: Boolean = false): String =
    writePlan {
      val w = data(20000, 8).write.format("indextables")
        .option(prefix + "enabled", mode != "off")
        .option(prefix + "distributionMode", if (mode == "off") "hash" else mode)
        .option(prefix + "targetSplitSize", "3M")
      (if (partitioned) w.partitionBy("day") else w).save(path)
    }

  test("hash mode rebalances on the partition columns with the advisory size") {
    val plan = write(tablePath("hash-partitioned"), "hash", partitioned = true)
    assert(
      plan.contains("REBALANCE_PARTITIONS_BY_COL") && plan.contains("hashpartitioning(day"),
      plan)
    // A first write asks for the target over the layout's bytes per shuffle byte.
    val advisory = ((3L << 20) / WriteSizeEstimator.SplitsLayoutExpansion).toLong
    assert(plan.contains(s"optimizeWrite=hash, advisoryPartitionSize=$advisory (sampling)"), plan)
    val unpartitioned = write(tablePath("hash"), "hash")
    assert(unpartitioned.contains("hashpartitioning(id"), unpartitioned)
  }

  test("balanced mode shuffles into defaultParallelism ranges; none and disabled do not shuffle") {
    val balanced = write(tablePath("balanced"), "balanced")
    val parallelism = spark.sparkContext.defaultParallelism
    assert(
      raw"rangepartitioning\(id#\d+L ASC NULLS FIRST, $parallelism\)".r.findFirstIn(balanced)
        .isDefined,
      balanced)
    val none = write(tablePath("none"), "none")
    assert(!none.contains("Exchange") && none.contains("optimizeWrite=none"), none)
    val off = write(tablePath("off"), "off")
    assert(!off.contains("Exchange") && !off.contains("optimizeWrite"), off)
  }

  test("every uploaded split adds its bytes and rows to its task's output metrics") {
    val path = tablePath("metrics")
    val bytes = new java.util.concurrent.atomic.AtomicLong()
    val records = new java.util.concurrent.atomic.AtomicLong()
    val listener = new SparkListener {
      override def onTaskEnd(end: SparkListenerTaskEnd): Unit = Option(end.taskMetrics).foreach {
        m =>
          bytes.addAndGet(m.outputMetrics.bytesWritten)
          records.addAndGet(m.outputMetrics.recordsWritten)
      }
    }
    spark.sparkContext.addSparkListener(listener)
    try {
      data(30000, 3).write.format("indextables")
        .option("spark.indextables.maxRowsPerSplit", "4000")
        .save(path)
      eventually(records.get() == 30000L)
    } finally spark.sparkContext.removeSparkListener(listener)
    val splits = FileUtils.listFiles(new File(path), Array("split"), true)
    import scala.jdk.CollectionConverters._
    assert(splits.size() >= 9)
    assert(bytes.get() === splits.asScala.map(_.length()).sum)
    assert(records.get() === 30000L)
  }
}

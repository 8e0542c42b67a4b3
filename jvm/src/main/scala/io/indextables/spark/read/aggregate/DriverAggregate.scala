package io.indextables.spark.read.aggregate

import java.util.concurrent.ConcurrentLinkedQueue

import scala.jdk.CollectionConverters._

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.expressions.aggregate.{AggregateFunc, Aggregation, Avg, Count, Sum}
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.apache.spark.sql.connector.read.{LocalScan, Scan}
import org.apache.spark.sql.types._

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.metrics.{ScanMetrics, ScanTaskCounters}
import io.indextables.spark.read.{DriverThreads, ReadPlan, ScanInputs, SplitInputPartition, StreamableScan}

/**
 * A pushed aggregation over few splits, answered completely on the driver: each split's
 * partial rows come from the same [[IndexTables4SparkAggregateReader]] a task would run (on a
 * few threads, each taking the next unread split), and the driver merges them into Spark's
 * final rows.
 * No Spark job runs, which for a small aggregation costs more than the search itself.
 *
 * @param aggregation Spark's aggregation (AVG as AVG)
 * @param plan        the partial plan the splits answer: AVG(c) as SUM(c) and COUNT(c)
 * @param outputs     for each of Spark's aggregate functions, the partials it is made of: one
 *                    index into `plan.metrics`, two (sum, count) for an AVG
 */
final case class DriverAggregate(
    aggregation: Aggregation,
    plan: AggregatePlan,
    outputs: Seq[Seq[Int]],
    resultTypes: Seq[DataType]) {

  /** The final rows' schema: group keys, then each function's result. */
  def schema: StructType = StructType(
    plan.schema.fields.take(plan.groupBy.size) ++ resultTypes.zipWithIndex.map { case (t, i) =>
      StructField(s"agg_$i", t, nullable = true)
    })

  def describe: String = plan.describe + ", AnsweredOnDriver: true"

  /**
   * The driver-answered route's scan: the kept splits of `in` aggregated here, on twice as
   * many threads as cores (a thread waits in each native call while tantivy4java's runtime
   * searches, so one per core leaves cores idle: GROUP BY level over 20 splits took 36 to 39
   * ms with 2 threads on 2 cores, 28 to 35 ms with 4), and their final rows returned as a
   * local scan.
   */
  private[read] def scan(in: ScanInputs): Scan = {
    val threads = 2 * SparkSession.active.sparkContext.defaultParallelism
    val counters = ScanTaskCounters.total()
    val rows = run(in.readPlan(Some(plan)), in.splits(Some(plan)), threads, counters)
    new IndexTables4SparkDriverScan(
      rows,
      schema,
      s"${in.header}, $describe, Splits: ${in.kept.size}/${in.files.size}, Tasks: 0",
      in.pruning ++ counters.values)
  }

  /**
   * The final rows over `splits` (read as `read` plans them), one per group, read by up to
   * `threads` threads, which count what they did into `counters`.
   */
  def run(
      read: ReadPlan,
      splits: Seq[SplitInputPartition],
      threads: Int,
      counters: ScanTaskCounters): Seq[InternalRow] = {
    // Each thread takes the next unread split until none is left, and merges its partial rows
    // as they come, so merging overlaps the native work; the threads' few groups are merged at
    // the end.
    val unread = new ConcurrentLinkedQueue[SplitInputPartition](splits.asJava)
    val perThread = DriverThreads.workers(math.min(threads, splits.size)) {
      val merged = new Merged(plan)
      val mine = ScanTaskCounters.reading()
      try {
        var split = unread.poll()
        while (split != null) {
          val reader = new IndexTables4SparkAggregateReader(read, split, plan, mine)
          try while (reader.next()) merged.add(reader.get())
          finally reader.close()
          split = unread.poll()
        }
      } finally mine.close()
      (merged, mine)
    }
    perThread.foreach(t => counters.add(t._2))
    val merged = perThread.map(_._1).reduceOption(_ addAll _).getOrElse(new Merged(plan)).groups
    val groups = plan.groupBy.size
    // Without groups there is one row even over no split: COUNT 0, the others NULL.
    if (merged.isEmpty && groups == 0) merged(Nil) = PartialAggregator.empty(plan.metrics)
    merged.toSeq.map { case (key, acc) =>
      val results = outputs.zip(resultTypes).map {
        case (Seq(i), _) => acc(i)
        case (Seq(s, c), _) =>
          val n = acc(c).asInstanceOf[Long]
          if (n == 0 || acc(s) == null) null
          else
            (acc(s) match {
              case l: Long => l.toDouble
              case d: Double => d
              case other => throw IndexTablesErrors.internalError(s"AVG of $other")
            }) / n
        case (other, _) => throw IndexTablesErrors.internalError(s"aggregate outputs $other")
      }
      new GenericInternalRow((key ++ results).toArray[Any]): InternalRow
    }
  }
}

object DriverAggregate {

  /**
   * The partial aggregation behind `aggregation` with each AVG as SUM and COUNT of its column,
   * and how Spark's functions map onto its functions; None when it holds a function that a
   * complete answer cannot give (Spark then pushes it partially, or not at all).
   */
  def partial(aggregation: Aggregation): Option[(Aggregation, Seq[Seq[Int]])] = {
    val funcs = mutable.ArrayBuffer.empty[AggregateFunc]
    val outputs = aggregation.aggregateExpressions().toSeq.map {
      case a: Avg if !a.isDistinct =>
        funcs += new Sum(a.column, false)
        funcs += new Count(a.column, false)
        Seq(funcs.size - 2, funcs.size - 1)
      case _: Avg => return None
      case f =>
        funcs += f
        Seq(funcs.size - 1)
    }
    Some((new Aggregation(funcs.toArray, aggregation.groupByExpressions()), outputs))
  }

  /** Spark's result type of each function, from the partial plan's metric types. */
  def resultTypes(plan: AggregatePlan, outputs: Seq[Seq[Int]]): Seq[DataType] = outputs.map {
    case Seq(_, _) => DoubleType
    case Seq(i) => plan.metrics(i).outputType
    case other => throw IndexTablesErrors.internalError(s"aggregate outputs $other")
  }
}

/** Partial rows merged by group key: each metric's partials combined as Spark would. */
private final class Merged(plan: AggregatePlan) {
  val groups = mutable.LinkedHashMap.empty[Seq[Any], Array[Any]]
  private val keyCount = plan.groupBy.size

  def add(r: InternalRow): Unit = {
    val key = plan.groupBy.indices.map(i => r.get(i, plan.groupBy(i).dataType))
    val values = Array.tabulate[Any](plan.metrics.size) { i =>
      r.get(keyCount + i, plan.metrics(i).outputType)
    }
    put(key, values)
  }

  def addAll(other: Merged): Merged = {
    other.groups.foreach { case (k, v) => put(k, v) }
    this
  }

  private def put(key: Seq[Any], values: Array[Any]): Unit = groups.get(key) match {
    case None => groups(key) = values
    case Some(acc) =>
      plan.metrics.indices.foreach(i =>
        acc(i) = PartialAggregator.combine(plan.metrics(i), acc(i), values(i)))
  }
}

/** The final rows of an aggregation the driver answered, as a local scan (no task). */
final class IndexTables4SparkDriverScan(
    rowsOut: Seq[InternalRow],
    schema: StructType,
    desc: String,
    metrics: Array[CustomTaskMetric],
    protected val streamOf: Option[ScanInputs] = None)
    extends LocalScan with StreamableScan {

  override def description(): String = desc
  override def supportedCustomMetrics(): Array[CustomMetric] = ScanMetrics.all
  override def reportDriverMetrics(): Array[CustomTaskMetric] = metrics
  override def rows(): Array[InternalRow] = rowsOut.toArray
  override def readSchema(): StructType = schema
}

package io.indextables.spark.read

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.metric.CustomTaskMetric
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReader}

import io.indextables.spark.metrics.ScanTaskCounters

/**
 * The splits one read task searches, one after the other, and where Spark should run it: the
 * executors [[SplitPlacement]] gives its splits (none in local mode).
 */
final case class SplitGroup(splits: Seq[SplitInputPartition], locations: Seq[String] = Nil)
    extends InputPartition {
  override def preferredLocations(): Array[String] = locations.toArray
}

/**
 * How the splits of a scan are grouped into read tasks. A task has a fixed cost in Spark (its
 * scheduling and its closure) that a small split does not repay, so several splits may share
 * one task. Pure; used on the driver.
 */
object SplitGroups {

  /**
   * `splits` in groups, by the setting `spark.indextables.read.splitsPerTask`: a number takes
   * that many consecutive splits per task; `auto` keeps one split per task while there are no
   * more splits than `cores`, and otherwise makes whole rounds of tasks (a multiple of `cores`)
   * of at most `maxPerTask` splits each, balanced by record count (the largest split goes to
   * the group with the fewest records so far).
   */
  def of(
      splits: Seq[SplitInputPartition],
      splitsPerTask: String,
      maxPerTask: Int,
      cores: Int): Seq[SplitGroup] = splitsPerTask match {
    case "auto" =>
      val n = splits.size
      val slots = math.max(cores, 1)
      if (n <= slots) splits.map(s => SplitGroup(Seq(s)))
      else {
        val rounds = ceilDiv(ceilDiv(n, maxPerTask), slots)
        balanced(splits, math.min(n, rounds * slots))
      }
    case fixed => splits.grouped(fixed.toInt).map(SplitGroup(_)).toSeq
  }

  private def ceilDiv(a: Int, b: Int): Int = (a + b - 1) / b

  /** `groups`, each preferring the executors its splits are placed on. */
  def placed(groups: Seq[SplitGroup], executors: Seq[SplitPlacement.Executor]): Seq[SplitGroup] =
    if (executors.isEmpty) groups
    else
      groups.map(g =>
        g.copy(locations =
          g.splits.flatMap(s => SplitPlacement.executorOf(s.path, executors)).map(_.location)
            .distinct))

  /** `splits` in `tasks` groups of near-equal record counts, each in the log's order. */
  private def balanced(splits: Seq[SplitInputPartition], tasks: Int): Seq[SplitGroup] = {
    val records = new Array[Long](tasks)
    val members = Array.fill(tasks)(Vector.newBuilder[(Int, SplitInputPartition)])
    splits.zipWithIndex.sortBy { case (s, i) => (-s.numRecords.getOrElse(0L), i) }.foreach {
      case (s, i) =>
        val g = records.indices.minBy(records(_))
        records(g) += s.numRecords.getOrElse(0L)
        members(g) += (i -> s)
    }
    members.toSeq.map(b => SplitGroup(b.result().sortBy(_._1).map(_._2))).filter(_.splits.nonEmpty)
  }
}

/**
 * Reads the splits of a [[SplitGroup]] one after the other, each through its own reader, opened
 * when the previous one is exhausted and closed then. Owned by one task thread.
 */
final class SplitGroupReader(
    group: SplitGroup,
    open: (SplitInputPartition, ScanTaskCounters) => PartitionReader[InternalRow])
    extends PartitionReader[InternalRow] {

  // Closed with the reader: Spark reads the metrics before it closes a task's reader.
  private val counters = ScanTaskCounters.reading()
  private val pending = group.splits.iterator
  private var current: PartitionReader[InternalRow] = _

  override def next(): Boolean = {
    while (true) {
      if (current != null && current.next()) return true
      if (current != null) { current.close(); current = null }
      if (!pending.hasNext) return false
      current = open(pending.next(), counters)
    }
    false
  }

  override def get(): InternalRow = current.get()

  /** What the task's readers did so far: the scan's task metrics (see `metrics/ScanMetrics`). */
  override def currentMetricsValues(): Array[CustomTaskMetric] = counters.values

  override def close(): Unit =
    try if (current != null) current.close()
    finally {
      current = null
      counters.close()
    }
}

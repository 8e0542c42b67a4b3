package io.indextables.spark.metrics

import org.apache.spark.sql.connector.metric.{CustomMetric, CustomSumMetric, CustomTaskMetric}

/**
 * The metrics an IndexTables scan shows in the Spark UI's SQL tab (DataSource V2 custom
 * metrics): each is one class with a no-argument constructor, which Spark instantiates by name
 * to aggregate the tasks' values. Counts and bytes are sums over the tasks (and the driver);
 * the native time is a sum of task times, as Spark's own "scan time" is.
 *
 * The driver reports what planning decided ([[ScanMetrics.driver]]): the splits of the
 * snapshot, and those pruned by partition and by min/max statistics. The readers report what
 * they did ([[ScanTaskCounters]]): splits searched, documents matched, rows returned, bytes
 * fetched from storage, split-cache hits and native search time. A scan the driver answered
 * reports all of them from the driver.
 */
object ScanMetrics {

  val SplitsInSnapshot = "splitsInSnapshot"
  val SplitsPrunedByPartition = "splitsPrunedByPartition"
  val SplitsPrunedByStatistics = "splitsPrunedByStatistics"
  val SplitsSearched = "splitsSearched"
  val DocumentsMatched = "documentsMatched"
  val RowsReturned = "rowsReturned"
  val BytesFetched = "bytesFetched"
  val SplitCacheHits = "splitCacheHits"
  val NativeSearchTime = "nativeSearchTime"

  /** Every metric of an IndexTables scan, in the order the UI lists them. */
  def all: Array[CustomMetric] = Array(
    new SplitsInSnapshotMetric,
    new SplitsPrunedByPartitionMetric,
    new SplitsPrunedByStatisticsMetric,
    new SplitsSearchedMetric,
    new DocumentsMatchedMetric,
    new RowsReturnedMetric,
    new BytesFetchedMetric,
    new SplitCacheHitsMetric,
    new NativeSearchTimeMetric
  )

  /** One value of the metric `metricName`, as a reader or the driver reports it. */
  def value(metricName: String, v: Long): CustomTaskMetric = new CustomTaskMetric {
    override def name(): String = metricName
    override def value(): Long = v
  }

  /**
   * What planning decided, as driver metrics: the snapshot's splits (`inSnapshot`), how many
   * of them partition values excluded (`afterPartitions` were left), and how many of those
   * min/max statistics excluded (`kept` were left).
   */
  def driver(inSnapshot: Long, afterPartitions: Long, kept: Long): Array[CustomTaskMetric] =
    Array(
      value(SplitsInSnapshot, inSnapshot),
      value(SplitsPrunedByPartition, math.max(0L, inSnapshot - afterPartitions)),
      value(SplitsPrunedByStatistics, math.max(0L, afterPartitions - kept))
    )

  /** `n` bytes as Spark's UI shows sizes: "0.0 B", "12.3 KiB", "4.5 MiB". */
  def bytes(n: Long): String = {
    val units = Seq("B", "KiB", "MiB", "GiB", "TiB", "PiB")
    var v = n.toDouble
    var u = 0
    while (math.abs(v) >= 1024 && u < units.size - 1) { v /= 1024; u += 1 }
    f"$v%.1f ${units(u)}"
  }

  /** `nanos` as a duration: "850 ms", "12.4 s", "3.2 m". */
  def duration(nanos: Long): String = {
    val ms = nanos / 1000000L
    if (ms < 1000) s"$ms ms"
    else if (ms < 60000) f"${ms / 1000.0}%.1f s"
    else f"${ms / 60000.0}%.1f m"
  }
}

/**
 * Equal to any other instance of its class, as a case object is: a physical plan holding one
 * (`catalyst/IndexTablesLocalScanExec`) then equals the same plan made again, so Spark can reuse
 * it.
 */
trait ValueLikeMetric extends CustomMetric with Serializable {
  override def equals(other: Any): Boolean = other != null && other.getClass == getClass
  override def hashCode(): Int = getClass.getName.hashCode
}

/**
 * A count summed over the tasks and the driver. Serializable, as every metric here: a physical
 * plan that holds them (`catalyst/IndexTablesLocalScanExec`) travels in task closures.
 */
abstract class IndexTablesCountMetric(metricName: String, text: String)
    extends CustomSumMetric with ValueLikeMetric {
  override def name(): String = metricName
  override def description(): String = text
}

final class SplitsInSnapshotMetric
    extends IndexTablesCountMetric(ScanMetrics.SplitsInSnapshot, "splits in the snapshot")

final class SplitsPrunedByPartitionMetric
    extends IndexTablesCountMetric(
      ScanMetrics.SplitsPrunedByPartition,
      "splits pruned by partition")

final class SplitsPrunedByStatisticsMetric extends IndexTablesCountMetric(
      ScanMetrics.SplitsPrunedByStatistics,
      "splits pruned by min/max statistics")

final class SplitsSearchedMetric
    extends IndexTablesCountMetric(ScanMetrics.SplitsSearched, "splits searched")

final class DocumentsMatchedMetric
    extends IndexTablesCountMetric(ScanMetrics.DocumentsMatched, "documents matched")

final class RowsReturnedMetric
    extends IndexTablesCountMetric(ScanMetrics.RowsReturned, "rows returned by the index")

final class SplitCacheHitsMetric
    extends IndexTablesCountMetric(ScanMetrics.SplitCacheHits, "split cache hits")

/** Bytes summed over the tasks, shown as Spark shows sizes. */
final class BytesFetchedMetric extends ValueLikeMetric {
  override def name(): String = ScanMetrics.BytesFetched
  override def description(): String = "bytes fetched from storage"
  override def aggregateTaskMetrics(taskMetrics: Array[Long]): String =
    ScanMetrics.bytes(taskMetrics.sum)
}

/** Nanoseconds summed over the tasks, shown as a duration. */
final class NativeSearchTimeMetric extends ValueLikeMetric {
  override def name(): String = ScanMetrics.NativeSearchTime
  override def description(): String = "native search time"
  override def aggregateTaskMetrics(taskMetrics: Array[Long]): String =
    ScanMetrics.duration(taskMetrics.sum)
}

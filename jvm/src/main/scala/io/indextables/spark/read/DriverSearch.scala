package io.indextables.spark.read

import java.util.concurrent.ConcurrentLinkedQueue
import java.util.concurrent.atomic.AtomicLong

import scala.jdk.CollectionConverters._
import scala.collection.mutable.ArrayBuffer

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.Scan

import io.indextables.spark.config.IndexTablesConf
import io.indextables.spark.metrics.ScanTaskCounters
import io.indextables.spark.read.aggregate.{AggregatePushdown, IndexTables4SparkDriverScan}

/**
 * A search whose answer is small, answered on the driver: no Spark job runs, which for a small
 * search costs more than the search (a one-task job takes about 50 ms here; a rare term over 20
 * splits a few). Each kept split is searched there by the reader a task would use
 * ([[IndexTables4SparkPartitionReader]]: the same query, deletion vectors, columns and
 * decoding), on a few threads, and the rows come back as a local scan, which
 * `catalyst/IndexTablesAggregateStrategy` plans without a task (in a session without the
 * plugin's extensions, which install it, every search takes tasks).
 *
 * The one decision, [[scan]]: a search is answered here when it cannot return more than
 * `read.driverSearch.maxRows` rows (its LIMIT, or its splits' rows, are that few); any other
 * search with a query is tried here first, each split's matches counted before any row is
 * fetched, and goes to tasks as soon as they pass the bound (the trial costs a search of the
 * splits counted so far, no document fetch). Scans that read `_split`/`_doc` (row-level
 * operations), scans over more splits than `read.aggregate.driverMaxSplits`, and reads that
 * require aggregate pushdown (whose scan the planner checks) go to tasks. The
 * driver reads splits as executors do, through the session's storage settings.
 */
private[read] object DriverSearch {

  /** The local scan of `in`'s answer, when it is small; None: tasks read it. */
  def scan(in: ScanInputs): Option[Scan] = {
    val maxRows = in.table.opts.get(IndexTablesConf.DriverSearchMaxRows).toLong
    val kept = in.kept
    if (!mayAnswer(in.table, kept.size, 0) ||
      MetadataColumns.rowIds(MetadataColumns.in(in.required, in.table.schema)).nonEmpty) return None
    val stored = kept.map(_.numRecords.getOrElse(Long.MaxValue))
      .foldLeft(0L)((a, b) => if (a > Long.MaxValue - b) Long.MaxValue else a + b)
    val bound = in.limit.map(_.toLong).fold(stored)(math.min(_, stored))
    val plan = in.readPlan(None)
    // A read that must push its aggregates keeps its scan, which the planner checks.
    if (plan.requireAggregatePushdown) return None
    val certain = bound <= maxRows
    if (!certain && plan.variants.forall(_.queryAstJson.isEmpty)) return None
    // A trial needs one row past the bound to know it passed it.
    val cap = if (certain) bound else maxRows + 1
    val capped = plan.copy(limit = Some(plan.limit.fold(cap)(math.min(_, cap)).toInt))
    val threads = 2 * SparkSession.active.sparkContext.defaultParallelism
    val counters = ScanTaskCounters.total()
    read(capped, in.splits(None), threads, if (certain) Long.MaxValue else maxRows, counters).map {
      rows =>
        new IndexTables4SparkDriverScan(
          rows,
          plan.readSchema,
          s"${IndexTables4SparkScan.pushed(in, plan, in.limit)}, AnsweredOnDriver: true " +
            s"(${rows.size} rows), Splits: ${kept.size}/${in.files.size}, Tasks: 0",
          in.pruning ++ counters.values,
          Some(in)
        )
    }
  }

  /**
   * Whether a search of `table` reading `splits` splits and returning `rows` rows may be
   * answered here: the setting allows that many rows, the session plans local scans without a
   * task, the splits are few enough for the driver, and the read need not push aggregates.
   */
  def mayAnswer(table: ScanTable, splits: Int, rows: Long): Boolean = {
    val maxRows = table.opts.get(IndexTablesConf.DriverSearchMaxRows).toLong
    maxRows > 0 && rows <= maxRows && plannedWithoutTasks &&
    splits <= AggregatePushdown.driverMaxSplits(table) &&
    !table.opts.get(IndexTablesConf.RequireAggregatePushdown)
  }

  /**
   * Whether the session plans a local scan with no task ([[LocalScanStrategy]], which the
   * plugin's extensions install): without it Spark's own plan of a local scan under a filter or
   * projection runs a job anyway, and EXPLAIN would not show what was pushed.
   */
  private def plannedWithoutTasks: Boolean =
    SparkSession.active.sessionState.planner.strategies.exists(_.isInstanceOf[LocalScanStrategy])

  /**
   * The rows of `splits` read as `plan` says, on up to `threads` threads, each taking the next
   * unread split; None as soon as more than `maxRows` match (no row of a split is fetched
   * before its matches are counted). The threads count what they did into `counters`.
   */
  private def read(
      plan: ReadPlan,
      splits: Seq[SplitInputPartition],
      threads: Int,
      maxRows: Long,
      counters: ScanTaskCounters): Option[Seq[InternalRow]] = {
    val unread = new ConcurrentLinkedQueue[SplitInputPartition](splits.asJava)
    val matched = new AtomicLong()
    val perThread = DriverThreads.workers(math.min(threads, splits.size)) {
      val rows = ArrayBuffer.empty[InternalRow]
      val mine = ScanTaskCounters.reading()
      try {
        var split = unread.poll()
        while (split != null && matched.get() <= maxRows) {
          val reader = new IndexTables4SparkPartitionReader(plan, split, mine)
          try {
            if (matched.addAndGet(reader.rowCount.toLong) <= maxRows) {
              while (reader.next()) rows += reader.get()
            }
          } finally reader.close()
          split = unread.poll()
        }
      } finally mine.close()
      (rows, mine)
    }
    perThread.foreach(t => counters.add(t._2))
    if (matched.get() > maxRows) None else Some(perThread.flatMap(_._1))
  }
}

/**
 * A planner strategy that plans the local scans of IndexTables reads (driver-answered searches
 * and aggregations) as physical leaves that run no task; [[DriverSearch]] answers on the driver
 * only in a session that has one.
 */
trait LocalScanStrategy

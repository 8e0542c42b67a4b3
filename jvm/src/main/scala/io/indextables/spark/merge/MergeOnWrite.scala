package io.indextables.spark.merge

import java.util.concurrent.atomic.AtomicLong
import java.util.concurrent.{ExecutorService, Executors, ThreadFactory}

import org.apache.hadoop.conf.Configuration
import org.apache.spark.sql.SparkSession
import org.slf4j.LoggerFactory

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.{IndexTablesConf, IndexTablesOptions}
import io.indextables.spark.transaction.TransactionLog

/** The `spark.indextables.mergeOnWrite.*` settings of one write. Serializable. */
final case class MergeOnWriteSettings(
    async: Boolean,
    targetSize: Long,
    mergeFactor: Int,
    batchCpuFraction: Double,
    minBatchesToTrigger: Int,
    maxConcurrentBatches: Int,
    merge: MergeSettings) {

  /** Merge groups per batch: a fraction of the cluster's cores, at least one. */
  def batchSize(clusterCores: Int): Int = math.max(1, (clusterCores * batchCpuFraction).toInt)

  /** How many merge groups the table must hold before a write starts a merge. */
  def threshold(clusterCores: Int): Int = batchSize(clusterCores) * minBatchesToTrigger
}

object MergeOnWriteSettings {

  /** The settings when merge on write is enabled for this write; None otherwise. */
  def of(opts: IndexTablesOptions): Option[MergeOnWriteSettings] =
    if (!opts.get(IndexTablesConf.MergeOnWriteEnabled)) None
    else Some(checked(MergeOnWriteSettings(
      async = opts.get(IndexTablesConf.MergeOnWriteAsync),
      targetSize = opts.get(IndexTablesConf.MergeOnWriteTargetSize),
      mergeFactor = opts.get(IndexTablesConf.MergeOnWriteMergeFactor),
      batchCpuFraction = opts.get(IndexTablesConf.MergeOnWriteBatchCpuFraction),
      minBatchesToTrigger = opts.get(IndexTablesConf.MergeOnWriteMinBatchesToTrigger),
      maxConcurrentBatches = opts.get(IndexTablesConf.MergeOnWriteMaxConcurrentBatches),
      merge = MergeSettings(opts)
    )))

  /** Settings under which no merge could ever start are refused, naming both keys. */
  private def checked(s: MergeOnWriteSettings): MergeOnWriteSettings = {
    if (s.merge.maxSourceSplitsPerMerge < s.mergeFactor)
      throw IndexTablesErrors.invalidOption(
        IndexTablesConf.MergeOnWriteMergeFactor.key,
        s.mergeFactor.toString,
        s"at most ${IndexTablesConf.MergeMaxSourceSplitsPerMerge.key} " +
          s"(${s.merge.maxSourceSplitsPerMerge}), since a merge takes that many splits at most"
      )
    s
  }
}

/**
 * One merge of merge on write, owed or started, as `DESCRIBE INDEXTABLES MERGE JOBS` shows it.
 *
 * @param status `PENDING`: the table holds enough merge groups but its write found no slot
 *   free; the merge starts when one is (the row becomes `RUNNING`, same id), or the row goes when
 *   a look finds nothing left to merge ([[MergeSlots]]). Then `RUNNING`, `COMPLETED` or `FAILED`.
 *   While a merge of a table may still start, one of its rows is `PENDING` or `RUNNING`.
 * @param triggerVersion the version of the write that started the merge (of a `PENDING` row,
 *   the latest write that found no slot)
 * @param startTime when the merge started (of a `PENDING` row, when it was first owed)
 */
final case class MergeJob(
    jobId: String,
    tablePath: String,
    status: String,
    triggerVersion: Long,
    totalGroups: Int,
    startTime: Long,
    endTime: Option[Long],
    result: Option[MergeResult],
    error: Option[String])

/**
 * Merge on write: after a write commits, when the table holds at least the threshold of merge
 * groups (at least `mergeFactor` small splits of one size tier and partition, as
 * [[MergePlanner]] tiers them), a merge of them starts, in a background thread of the driver by
 * default, so the writer returns at once. At most one merge runs per table and
 * `maxConcurrentBatches` in the driver. A write that finds those taken leaves its table pending:
 * when a merge of this driver ends, each pending table not being merged is looked at again, as
 * its last write would have looked (a stream's last batches, committed while the table was being
 * merged, are merged then rather than at the table's next write). A look that finds no slot
 * stays pending. While a table is pending or looked at, its jobs list a `PENDING` row
 * ([[MergeSlots]]), so that nobody polling the jobs takes the moment between two merges for the
 * end. A merge that loses to a concurrent commit gives up as [[MergeExecutor]] says; a failure
 * is recorded in its job, never raised to the writer. The jobs of this driver (every one owed or
 * running, and the last [[MaxJobsKept]] finished) are listed by [[jobs]].
 */
object MergeOnWrite {

  private val logger = LoggerFactory.getLogger(getClass)

  val Operation: String = "MERGE ON WRITE"
  val MaxJobsKept: Int = 1000

  private val counter = new AtomicLong()
  private val slots =
    new MergeSlots(
      MaxJobsKept,
      () => s"merge-${counter.incrementAndGet()}",
      () => System.currentTimeMillis())

  private lazy val pool: ExecutorService = Executors.newCachedThreadPool(new ThreadFactory {
    override def newThread(r: Runnable): Thread = {
      val t = new Thread(r, s"indextables-merge-on-write-${counter.get()}")
      t.setDaemon(true)
      t
    }
  })

  /** Every merge-on-write job of this driver, oldest first. */
  def jobs: Seq[MergeJob] = slots.jobs

  /**
   * Starts a merge of the table behind `log` when it holds enough small splits; returns the job
   * started, if any. `afterMerge` runs once the merge has committed (purge on write's
   * `triggerAfterMerge`). Never throws: merge on write must not fail a write that committed.
   */
  def afterCommit(
      spark: SparkSession,
      log: TransactionLog,
      hadoopConf: Configuration,
      committedVersion: Long,
      settings: MergeOnWriteSettings,
      afterMerge: () => Unit = () => ()): Option[MergeJob] =
    try {
      val request = MergeRequest(
        settings.targetSize,
        None,
        settings.merge.maxSourceSplitsPerMerge,
        Some(settings.mergeFactor))
      val snapshot = log.snapshot()
      val groups = MergePlanner.plan(snapshot, request, _ => true, System.currentTimeMillis())
      val threshold = settings.threshold(spark.sparkContext.defaultParallelism)
      val table = log.tablePath.toString
      if (groups.size < threshold) None
      else {
        val lookAgain =
          () => { afterCommit(spark, log, hadoopConf, committedVersion, settings, afterMerge); () }
        slots.reserve(
          table,
          committedVersion,
          groups.size,
          settings.maxConcurrentBatches,
          lookAgain).map {
          job =>
            val work: Runnable =
              () => runJob(spark, log, hadoopConf, request, settings, job, afterMerge)
            if (settings.async) pool.submit(detached(spark, work)) else work.run()
            job
        }
      }
    } catch {
      case e: Exception =>
        logger.warn(s"Merge on write of ${log.tablePath} did not start: ${e.getMessage}", e)
        None
    }

  /**
   * `work` as a pool thread runs it: its jobs belong to no SQL execution. A pool thread holds a
   * copy of the local properties of the thread that created it, a write's, whose SQL execution
   * has ended since (Spark would list the merge's jobs under it); the description is set by
   * [[MergeExecutor]] for each merge.
   */
  private def detached(spark: SparkSession, work: Runnable): Runnable = () => {
    SqlExecutionKeys.foreach(spark.sparkContext.setLocalProperty(_, null))
    work.run()
  }

  /** Spark's `SQLExecution.EXECUTION_ID_KEY` and `EXECUTION_ROOT_ID_KEY`. */
  private val SqlExecutionKeys = Seq("spark.sql.execution.id", "spark.sql.execution.root.id")

  private def runJob(
      spark: SparkSession,
      log: TransactionLog,
      hadoopConf: Configuration,
      request: MergeRequest,
      settings: MergeOnWriteSettings,
      job: MergeJob,
      afterMerge: () => Unit): Unit = {
    val finished =
      try {
        val result = MergeExecutor.run(
          spark,
          log,
          hadoopConf,
          request,
          settings.merge,
          _ => true,
          Operation)
        job.copy(
          status = if (result.status == "failed") "FAILED" else "COMPLETED",
          endTime = Some(System.currentTimeMillis()),
          result = Some(result))
      } catch {
        case e: Throwable =>
          logger.warn(s"Merge on write of ${job.tablePath} failed: ${e.getMessage}", e)
          job.copy(
            status = "FAILED",
            endTime = Some(System.currentTimeMillis()),
            error = Some(Option(e.getMessage).getOrElse(e.getClass.getName)))
      }
    slots.finish(finished)
    try {
      if (finished.status == "COMPLETED") {
        try afterMerge()
        catch {
          case e: Exception =>
            logger.warn(s"After the merge on write of ${job.tablePath}: ${e.getMessage}", e)
        }
      }
    } finally lookAgainAtPending(spark)
  }

  /**
   * Runs the looks owed to the pending tables not being merged, each in a pool thread: a look
   * that finds enough merge groups and a free slot starts its merge (in that thread, when the
   * merge is synchronous), one that finds no slot leaves its table pending again, one that finds
   * nothing to merge ends the table's `PENDING` row ([[MergeSlots.lookEnded]]).
   */
  private def lookAgainAtPending(spark: SparkSession): Unit =
    slots.takeLooks().foreach { case (table, look) =>
      pool.submit(detached(
        spark,
        () =>
          try look()
          finally slots.lookEnded(table)))
    }
}

package io.indextables.spark.purge

import scala.collection.mutable
import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

import io.indextables.spark.transaction.{AddAction, LogRetention, TableLayout, TablePaths, TransactionLog}

/**
 * Deletes the split files of a table that no version of it can reach any more, and the log files
 * a checkpoint made unnecessary (PURGE INDEXTABLE and purge-on-write). Driver side; stateless.
 *
 * A split file is deleted only when all of these hold:
 *  - it lies below the table root, outside `_transaction_log`, and its name ends in `.split`
 *    (or, in a companion table, `.parquet`: the files of its rows)
 *    (or is such a split's `.crc`): nothing else in the directory is ever touched;
 *  - no version file that stays on storage adds it, no checkpoint or Avro state that stays on
 *    storage lists it, and the latest version does not hold it. This is a superset of what time
 *    travel can reach (a version's live files are those of the checkpoint it starts from plus
 *    the adds after it), so every reachable version keeps its files. Reading version files
 *    alone and ignoring checkpoints lost data upstream (indextables_spark PR #67): a split that
 *    a cleaned-up version added lives on only in the checkpoint;
 *  - its modification time is older than the retention. A write in flight has uploaded its
 *    splits but not yet committed them; they are recent, so the retention (24 hours at least,
 *    unless the check is turned off) keeps them until their commit is in the log.
 * The files are listed before the log is read, so a split committed before the log read is
 * known; just before deleting, the log is read again and any version committed meanwhile is
 * added to the referenced set.
 *
 * Every path taken from the log goes through [[TablePaths.resolve]]: a log naming a path outside
 * the table fails the purge before anything is deleted. A failed deletion is counted, not
 * thrown, and the next run retries it; a run killed half-way leaves every live file in place
 * (log files go only when a checkpoint covers them; splits only when unreferenced).
 */
object SplitPurge {

  private val logger = LoggerFactory.getLogger(getClass)
  private val HourMs = 3600L * 1000L

  /**
   * @param splitRetentionHours  unreferenced splits younger than this stay
   * @param txLogRetentionHours  version files a checkpoint covers stay this long (None: the
   *                             log's `purge.txLogRetentionHours`)
   * @param maxFilesToDelete     at most this many splits go in one run (oldest first)
   */
  final case class Settings(
      splitRetentionHours: Long,
      txLogRetentionHours: Option[Long],
      dryRun: Boolean,
      maxFilesToDelete: Long = Long.MaxValue)

  /** One split file that went (or, for a dry run, would go). */
  final case class Purged(path: String, size: Long, modificationTime: Long)

  /**
   * What one run did. `orphansFound` counts unreferenced splits of any age, `purged` those old
   * enough (deleted unless a dry run), `failed` the deletions that failed.
   */
  final case class Result(
      orphansFound: Long,
      purged: Seq[Purged],
      failed: Long,
      log: LogRetention.Plan,
      dryRun: Boolean) {
    def bytes: Long = purged.iterator.map(_.size).sum
    def status: String =
      if (dryRun) "DRY_RUN" else if (failed > 0) "PARTIAL_SUCCESS" else "SUCCESS"
  }

  def run(log: TransactionLog, settings: Settings, now: Long = System.currentTimeMillis())
      : Result = {
    val root = log.tablePath
    val store = log.tableStore
    val logPlan = LogRetention.plan(log, now, settings.txLogRetentionHours)

    // Listed first: a split committed before the log is read below is then known to be live.
    val logDirPrefix = root.toUri.getPath.stripSuffix("/") + "/" + TransactionLog.LogDirName + "/"
    val latest = log.snapshot()
    // A companion table's rows are Parquet files of its own: unreferenced, they go too.
    val companion = TableLayout.of(latest.protocol) == TableLayout.Companion &&
      !latest.metadata.configuration.contains(TableLayout.SourceTablePathKey)
    val listed = store.listRecursively(root).filter { f =>
      val p = f.path.toUri.getPath
      !p.startsWith(logDirPrefix) && isDataFile(f.path.getName, companion)
    }.toVector

    val referenced = mutable.HashSet.empty[String]
    addAll(referenced, root, latest.allFiles)
    val keptVersions = log.listVersions().filterNot(logPlan.versionFiles.toSet)
    keptVersions.foreach(v => addAll(referenced, root, adds(log, v)))
    // Every checkpoint on storage, including states this run's log cleanup drops: a superset
    // is safe, and what only a dropped state held goes on the next run.
    log.checkpointVersions().foreach(v => addAll(referenced, root, log.snapshotAt(v).allFiles))

    val cutoff = now - settings.splitRetentionHours * HourMs
    def orphans() = listed.filterNot(f => referenced.contains(key(splitOf(f.path))))
    val found = orphans()
    // Versions committed while we read: their adds are live too.
    val seen = (keptVersions :+ latest.version).max
    log.listVersions().filter(_ > seen).foreach(v => addAll(referenced, root, adds(log, v)))
    val eligible = orphans().filter(_.modificationTime < cutoff).sortBy(_.modificationTime)
      .take(math.min(settings.maxFilesToDelete, Int.MaxValue.toLong).toInt)

    var failed = 0L
    if (!settings.dryRun) {
      LogRetention.apply(log, logPlan)
      eligible.foreach { f =>
        try store.delete(f.path)
        catch {
          case NonFatal(e) =>
            failed += 1
            logger.warn(s"PURGE of $root could not delete ${f.path}: ${e.getMessage}")
        }
      }
    }
    val purged = eligible.map(f => Purged(relative(root, f.path), f.length, f.modificationTime))
    logger.info(s"PURGE of $root (dryRun=${settings.dryRun}): ${found.size} unreferenced " +
      s"splits, ${purged.size} older than ${settings.splitRetentionHours} h, $failed failed; " +
      s"${logPlan.versionFiles.size} version files, ${logPlan.stateDirs.size} states")
    Result(found.size.toLong, purged, failed, logPlan, settings.dryRun)
  }

  /**
   * The files PURGE may delete: splits, and in a companion table the Parquet files of its rows,
   * with their checksum files.
   */
  def isDataFile(name: String, companion: Boolean): Boolean = {
    val file = if (name.startsWith(".") && name.endsWith(".crc")) name.drop(1).dropRight(4)
    else name
    file.endsWith(".split") || (companion && file.endsWith(".parquet"))
  }

  private def adds(log: TransactionLog, version: Long): Seq[AddAction] =
    log.actionsOf(version).collect { case a: AddAction => a }

  private def addAll(into: mutable.Set[String], root: Path, files: Seq[AddAction]): Unit =
    files.foreach(a => a.files.foreach(f => into += key(TablePaths.resolve(root, f))))

  // A `.crc` file belongs to the file it checks.
  private def splitOf(p: Path): Path =
    if (p.getName.startsWith(".") && p.getName.endsWith(".crc"))
      new Path(p.getParent, p.getName.stripPrefix(".").stripSuffix(".crc"))
    else p

  private def key(p: Path): String = p.toUri.getPath

  private def relative(root: Path, p: Path): String =
    p.toUri.getPath.stripPrefix(root.toUri.getPath.stripSuffix("/") + "/")
}

package io.indextables.spark.purge

import scala.collection.mutable
import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

import io.indextables.spark.transaction.{Action, AddAction, CheckpointWriter, DeletionVectorFile, LogRetention, RemoveAction, TableLayout, TablePaths, TransactionLog}

/**
 * PURGE INDEXTABLE and purge-on-write, with Delta VACUUM's semantics: deletes the split files
 * the current version no longer references once they have been gone longer than the retention,
 * and the version files that log retention and the newest checkpoint allow. Driver side;
 * stateless.
 *
 * A split file is deleted only when all of these hold:
 *  - it lies below the table root, outside `_transaction_log`, and its name ends in `.split`
 *    or `.dv` (a deletion vector; or, in a companion table, `.parquet`: the files of its rows)
 *    (or is such a split's `.crc`): nothing else in the directory is ever touched;
 *  - the current version does not reference it (a companion split's Parquet files count as
 *    referenced with it). The current version is read from the checkpoint or Avro state it rests
 *    on plus the version files after it, so a split that only that state lists stays (upstream
 *    PR #67 lost data by reading version files alone);
 *  - it left the table longer ago than the retention: its removal time is the newest
 *    `deletionTimestamp` of a remove naming it (a companion Parquet file takes its split's; a
 *    deletion vector, that of the remove of the entry that named it) in
 *    the version files and tombstones still on storage, and its modification time when it was
 *    never committed or no remove of it is left; the later of the two counts. A write in flight
 *    has uploaded its splits but not committed them; they are recent, so the retention (24 hours
 *    at least, unless the check is turned off) keeps them until their commit is in the log.
 * Time travel to a version older than the retention may then find its files gone; the read fails
 * with `INDEXTABLES_SPLIT_PURGED`, naming the file, never with a wrong answer.
 *
 * The files are listed before the log is read, so a split committed before the log read is
 * known; just before deleting, the log is read again and any version committed meanwhile is
 * added to the referenced set.
 *
 * Log cleanup ([[LogRetention]]) deletes the version files older than both the log retention
 * and the newest checkpoint, except one holding a remove younger than the split retention (its
 * removal time still protects a file). When the table has no checkpoint, one of the current version is
 * written first (planned only, for a dry run), so that cleanup can rest on it; the checkpoint or
 * Avro state the current version rests on is never deleted.
 *
 * Every path taken from the log goes through [[TablePaths.resolve]]: a log naming a path outside
 * the table fails the purge before anything is deleted. A failed deletion is counted, not
 * thrown, and the next run retries it; a run killed half-way leaves every live file in place.
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
    val restOn = checkpointFirst(log, settings, now)
    val planned = LogRetention.plan(log, now, settings.txLogRetentionHours, restOn)
    val cutoff = now - settings.splitRetentionHours * HourMs

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
    val removals = new Removals(root)
    latest.tombstones.foreach(r => removals.remove(r, None))
    // An Avro state's tombstones carry no time: they left no later than the state was written.
    latest.stateBase.foreach { b =>
      b.manifest.tombstones.foreach(p =>
        removals.remove(RemoveAction(p, None, true), Some(b.manifest.createdAt)))
    }
    val versions = log.listVersions()
    // A version file holding a remove younger than the retention stays: once its removal time is
    // lost, a file removed recently would look as old as its modification time.
    val protecting = versions.filter { v =>
      removals.record(log.actionsOf(v), log.commitTimestamp(v)).exists(_ >= cutoff)
    }.toSet
    val logPlan = planned.copy(versionFiles = planned.versionFiles.filterNot(protecting))

    def orphans() = listed.filterNot(f => referenced.contains(key(splitOf(f.path))))
    val found = orphans()
    // Versions committed while we read: their adds are live too.
    val seen = (versions :+ latest.version).max
    log.listVersions().filter(_ > seen).foreach { v =>
      addAll(referenced, root, log.actionsOf(v).collect { case a: AddAction => a })
    }
    val eligible = orphans()
      .filter(f => removals.goneSince(key(splitOf(f.path))).forall(_ < cutoff))
      .filter(_.modificationTime < cutoff)
      .sortBy(_.modificationTime)
      .take(math.min(settings.maxFilesToDelete, Int.MaxValue.toLong).toInt)

    var failed = 0L
    if (!settings.dryRun) {
      eligible.foreach { f =>
        try store.delete(f.path)
        catch {
          case NonFatal(e) =>
            failed += 1
            logger.warn(s"PURGE of $root could not delete ${f.path}: ${e.getMessage}")
        }
      }
      LogRetention.apply(log, logPlan)
    }
    val purged = eligible.map(f => Purged(relative(root, f.path), f.length, f.modificationTime))
    logger.info(s"PURGE of $root (dryRun=${settings.dryRun}): ${found.size} unreferenced " +
      s"splits, ${purged.size} removed longer than ${settings.splitRetentionHours} h ago, " +
      s"$failed failed; ${logPlan.versionFiles.size} version files, " +
      s"${logPlan.stateDirs.size} states")
    Result(found.size.toLong, purged, failed, logPlan, settings.dryRun)
  }

  /**
   * When no checkpoint exists for log cleanup to rest on and version files older than the log
   * retention do, a checkpoint of the current version is written now (a dry run only plans as
   * if it were). Returns its version.
   */
  private def checkpointFirst(log: TransactionLog, settings: Settings, now: Long)
      : Option[Long] = {
    val hours = settings.txLogRetentionHours.getOrElse(log.settings.txLogRetentionHours)
    val latest = log.latestVersion.getOrElse(return None)
    val expired = LogRetention.expiredVersions(log, now - hours * HourMs)
    if (log.lastCheckpointVersion.isDefined || !expired.exists(_ < latest)) None
    else if (settings.dryRun) Some(latest)
    else {
      val snapshot = log.snapshot()
      CheckpointWriter.checkpoint(log, snapshot, forceCompaction = true)
      Some(snapshot.version)
    }
  }

  /**
   * When each file left the table, from the remove actions still on storage: the newest
   * `deletionTimestamp` of a remove naming it (its version's commit time when the remove has
   * none). A companion split's Parquet files leave with it.
   */
  private final class Removals(root: Path) {
    private val at = mutable.HashMap.empty[String, Long]
    private val owner = mutable.HashMap.empty[String, String]

    def remove(r: RemoveAction, committed: Option[Long]): Unit =
      r.deletionTimestamp.orElse(committed).foreach { t =>
        // The removed entry's deletion vector left the table with it.
        (r.path +: r.deletionVector.flatMap(_.file).toSeq).foreach { p =>
          val k = key(TablePaths.resolve(root, p, "remove"))
          at(k) = math.max(t, at.getOrElse(k, Long.MinValue))
        }
      }

    /** Records the removes and companion files of one version; returns its removal times. */
    def record(actions: Seq[Action], committed: Long): Seq[Long] = actions.flatMap {
      case r: RemoveAction =>
        remove(r, Some(committed))
        Some(r.deletionTimestamp.getOrElse(committed))
      case a: AddAction =>
        val split = key(TablePaths.resolve(root, a.path))
        a.companionSourceFiles.getOrElse(Nil)
          .foreach(f => owner(key(TablePaths.resolve(root, f))) = split)
        None
      case _ => None
    }

    /** When the file at `k` (a path key) left the table, if a remove says so. */
    def goneSince(k: String): Option[Long] = at.get(k).orElse(owner.get(k).flatMap(at.get))
  }

  /**
   * The files PURGE may delete: splits, their deletion vectors, and in a companion table the
   * Parquet files of its rows, with their checksum files.
   */
  def isDataFile(name: String, companion: Boolean): Boolean = {
    val file = if (name.startsWith(".") && name.endsWith(".crc")) name.drop(1).dropRight(4)
    else name
    file.endsWith(".split") || file.endsWith(DeletionVectorFile.Suffix) ||
    (companion && file.endsWith(".parquet"))
  }

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

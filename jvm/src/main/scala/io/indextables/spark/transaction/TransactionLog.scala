package io.indextables.spark.transaction

import java.io.FileNotFoundException

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

/**
 * The handle of one table's transaction log at `<tablePath>/_transaction_log`: lists and reads
 * version files, builds [[Snapshot]]s and starts [[OptimisticTransaction]]s. Driver side.
 *
 * Thread-safe. It caches the newest snapshot it has built, so that reading a later version
 * replays only the version files added since. Obtain handles through [[TransactionLog.forTable]].
 * Checkpoints are not read yet: a table whose `_last_checkpoint` is newer than its newest JSON
 * version file is refused rather than shown with stale state.
 */
final class TransactionLog private (
    val tablePath: Path,
    hadoopConf: Configuration,
    val options: Map[String, String]) {

  val logPath: Path = new Path(tablePath, TransactionLog.LogDirName)

  private[transaction] val store: LogStore = LogStore.forPath(logPath, hadoopConf)

  @volatile private var cached: Option[Snapshot] = None

  /** True when version 0 exists, i.e. the table has been created. */
  def exists: Boolean = store.exists(VersionFiles.path(logPath, 0))

  /** The versions of the JSON version files present, ascending. */
  def listVersions(): Seq[Long] =
    store.list(logPath).flatMap(p => VersionFiles.versionOf(p.getName)).sorted

  /**
   * The newest version of the table: the newest JSON version file or, if newer, the version
   * that `_last_checkpoint` names. None when the table does not exist.
   */
  def latestVersion: Option[Long] = {
    val json = listVersions().lastOption
    (json.toSeq ++ lastCheckpointVersion().toSeq).reduceOption(_ max _)
  }

  /** The snapshot of the newest version; throws if the table does not exist. */
  def snapshot(): Snapshot =
    latestSnapshotOption().getOrElse(throw TransactionLogErrors.tableNotFound(tablePath))

  /** The snapshot of `version`; throws if its version file (or an earlier one) is missing. */
  def snapshotAt(version: Long): Snapshot = {
    val versions = listVersions()
    if (!versions.contains(version)) {
      throw TransactionLogErrors.versionNotFound(tablePath, version, latestVersion)
    }
    load(version, versions.toSet)
  }

  def startTransaction(): OptimisticTransaction = new OptimisticTransaction(this)

  /** The newest snapshot, or None when no version file exists yet (a new table). */
  private[transaction] def latestSnapshotOption(): Option[Snapshot] = {
    val versions = listVersions()
    lastCheckpointVersion().foreach { cp =>
      if (versions.lastOption.forall(_ < cp)) {
        throw TransactionLogErrors.checkpointNotSupported(tablePath, cp, versions.lastOption)
      }
    }
    versions.lastOption.map(latest => load(latest, versions.toSet))
  }

  /** Remembers the state after our own commit, so that the next snapshot needs no read. */
  private[transaction] def recordCommit(
      base: Option[Snapshot],
      version: Long,
      actions: Seq[Action]): Unit = synchronized {
    if (cached.map(_.version) == base.map(_.version)) {
      // The commit has already succeeded; a state we cannot replay is simply not cached.
      cached = scala.util.Try(LogReplay.replay(tablePath, base, Seq(version -> actions))).toOption
    }
  }

  private def load(target: Long, present: Set[Long]): Snapshot = {
    val base = cached.filter(_.version <= target)
    base match {
      case Some(s) if s.version == target => s
      case _ =>
        val from = base.map(_.version + 1).getOrElse(0L)
        val files = (from to target).map { v =>
          if (!present.contains(v)) {
            throw TransactionLogErrors.missingVersionFile(tablePath, v, target)
          }
          v -> readVersion(v)
        }
        val snapshot = LogReplay.replay(tablePath, base, files)
        synchronized {
          if (cached.forall(_.version < snapshot.version)) cached = Some(snapshot)
        }
        snapshot
    }
  }

  private def readVersion(version: Long): Seq[Action] = {
    val file = VersionFiles.path(logPath, version)
    val bytes =
      try store.read(file)
      catch {
        case e: FileNotFoundException =>
          throw TransactionLogErrors.unreadableVersionFile(file, "the file disappeared", e)
      }
    VersionFiles.decode(file, bytes)
  }

  private def lastCheckpointVersion(): Option[Long] = {
    val file = new Path(logPath, TransactionLog.LastCheckpointName)
    if (!store.exists(file)) None
    else {
      try {
        Option(TransactionLog.mapper.readTree(store.read(file)).get("version"))
          .filter(_.canConvertToLong)
          .map(_.asLong())
      } catch {
        // An unreadable pointer must not make the JSON log unreadable; it is ignored.
        case NonFatal(_) => None
      }
    }
  }

  override def toString: String = s"TransactionLog($tablePath)"
}

/** Factory of [[TransactionLog]] handles, with a small LRU cache keyed by path and options. */
object TransactionLog {

  /** The highest reader protocol version this code can read. */
  val MaxReaderVersion: Int = 4

  /** The highest writer protocol version this code can write. */
  val MaxWriterVersion: Int = 4

  val LogDirName: String = "_transaction_log"
  val LastCheckpointName: String = "_last_checkpoint"

  private val CacheSize = 64
  private val mapper = new ObjectMapper()

  private val cache = new java.util.LinkedHashMap[(String, Map[String, String]), TransactionLog](
    16, 0.75f, true) {
    override def removeEldestEntry(
        e: java.util.Map.Entry[(String, Map[String, String]), TransactionLog]): Boolean =
      size() > CacheSize
  }

  /**
   * The handle of the table at `tablePath` (qualified against its file system). Handles are
   * shared per table path and options; the Hadoop configuration of the first call is kept.
   */
  def forTable(
      tablePath: String,
      hadoopConf: Configuration,
      options: Map[String, String]): TransactionLog = {
    val raw = new Path(tablePath)
    val qualified = raw.getFileSystem(hadoopConf).makeQualified(raw)
    val key = (qualified.toString, options)
    cache.synchronized {
      Option(cache.get(key)).getOrElse {
        val log = new TransactionLog(qualified, hadoopConf, options)
        cache.put(key, log)
        log
      }
    }
  }

  /** Drops every cached handle (tests, or after a table was deleted and re-created). */
  def clearCache(): Unit = cache.synchronized(cache.clear())
}

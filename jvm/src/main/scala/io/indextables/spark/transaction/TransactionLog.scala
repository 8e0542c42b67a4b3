package io.indextables.spark.transaction

import java.io.FileNotFoundException

import scala.util.control.NonFatal

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.LogSettings
import io.indextables.spark.util.BoundedCache
import io.indextables.spark.storage.LogStore

/**
 * The handle of one table's transaction log at `<tablePath>/_transaction_log`: lists and reads
 * version files, builds [[Snapshot]]s and starts [[OptimisticTransaction]]s. Driver side.
 *
 * Thread-safe. Handles are cheap; every handle of one table (same path and file-system
 * options, see [[TransactionLog.forTable]]) shares one [[TransactionLog.SharedState]], which
 * caches the newest snapshot built, so that reading a later version replays only the version
 * files added since, and two queries on an unchanged table share one snapshot. A snapshot starts
 * from the checkpoint that `_last_checkpoint` names (any of the three forms, see
 * [[CheckpointReader]]) and replays the version files after it; time travel to a version before
 * that checkpoint starts from the newest checkpoint at or before it, or from version 0.
 *
 * @param settings the log's settings for the operations of this handle (retries, checkpoints)
 */
final class TransactionLog private (
    val tablePath: Path,
    hadoopConf: Configuration,
    val settings: LogSettings,
    shared: TransactionLog.SharedState) {

  val logPath: Path = new Path(tablePath, TransactionLog.LogDirName)

  private[transaction] val store: LogStore = LogStore.forPath(logPath, hadoopConf)

  private def cached: Option[Snapshot] = shared.cached

  /**
   * The store of the table's files (splits included). Maintenance commands list and delete
   * splits through it; paths taken from the log must go through [[TablePaths.resolve]] first.
   */
  def tableStore: LogStore = store

  /** The versions of every checkpoint on storage (JSON or Avro state), ascending. */
  def checkpointVersions(): Seq[Long] = listCheckpoints().map(_.version)

  /** The version `_last_checkpoint` names, if the pointer exists and can be read. */
  def lastCheckpointVersion: Option[Long] = lastCheckpoint().map(_.version)

  /** True when the table has been created: version 0 or a checkpoint pointer exists. */
  def exists: Boolean =
    store.exists(VersionFiles.path(logPath, 0)) || store.exists(lastCheckpointPath)

  /** The versions of the JSON version files present, ascending. */
  def listVersions(): Seq[Long] =
    store.list(logPath).flatMap(p => VersionFiles.versionOf(p.getName)).sorted

  /**
   * The newest version of the table: the newest JSON version file or, if newer, the version
   * that `_last_checkpoint` names. None when the table does not exist.
   */
  def latestVersion: Option[Long] = {
    val json = listVersions().lastOption
    (json.toSeq ++ lastCheckpoint().map(_.version).toSeq).reduceOption(_ max _)
  }

  /** The snapshot of the newest version; throws if the table does not exist. */
  def snapshot(): Snapshot =
    latestSnapshotOption().getOrElse(throw IndexTablesErrors.tableNotFound(tablePath.toString))

  /**
   * The snapshot of `version` (time travel). Throws when the version does not exist yet, or
   * when retention removed the version files that it needs and no checkpoint covers it.
   */
  def snapshotAt(version: Long): Snapshot = {
    val versions = listVersions()
    val latest = (versions.lastOption.toSeq ++ lastCheckpoint().map(_.version)).reduceOption(
      _ max _)
    if (version < 0 || latest.forall(_ < version)) {
      throw IndexTablesErrors.versionNotFound(
        tablePath,
        version,
        VersionFiles.fileName(version),
        latest)
    }
    load(version, versions)
  }

  /**
   * The newest version committed at or before `timestampMs` (epoch ms): a version file's
   * modification time, or for a version only an Avro state holds, the state's creation time.
   */
  def versionAsOfTimestamp(timestampMs: Long, shown: String): Long = {
    val versions = listVersions()
    val fromFiles = versions.map(v => v -> store.modificationTime(VersionFiles.path(logPath, v)))
    val jsonSet = versions.toSet
    val fromStates = stateVersions().filterNot(jsonSet.contains).flatMap { v =>
      scala.util.Try(
        v -> state.AvroStateReader.readManifest(store, logPath, LastCheckpoint.stateDirName(v))
          .createdAt).toOption
    }
    val all = (fromFiles ++ fromStates).sortBy(_._1)
    if (all.isEmpty) throw IndexTablesErrors.tableNotFound(tablePath.toString)
    all.filter(_._2 <= timestampMs).lastOption.map(_._1).getOrElse(
      throw IndexTablesErrors.timestampBeforeTable(tablePath, shown, all.head._1))
  }

  def startTransaction(): OptimisticTransaction = new OptimisticTransaction(this)

  /** The actions of version file `version` (history); throws if it cannot be read. */
  def actionsOf(version: Long): Seq[Action] = readVersion(version)

  /** The operation recorded for `version`, when its writer recorded one (see [[CommitInfo]]). */
  def commitInfo(version: Long): Option[CommitInfo] = {
    val p = CommitInfo.path(logPath, version)
    if (!store.exists(p)) None
    else scala.util.Try(store.read(p)).toOption.flatMap(CommitInfo.decode)
  }

  /** When version `version` was committed: its version file's modification time, epoch ms. */
  def commitTimestamp(version: Long): Long =
    store.modificationTime(VersionFiles.path(logPath, version))

  /** The newest snapshot, or None when no version file exists yet (a new table). */
  def latestSnapshotOption(): Option[Snapshot] = {
    val versions = listVersions()
    val cp = lastCheckpoint()
    (versions.lastOption.toSeq ++ cp.map(_.version)).reduceOption(_ max _)
      .map(latest => load(latest, versions, cp))
  }

  /** Remembers the state after our own commit, so that the next snapshot needs no read. */
  private[transaction] def recordCommit(
      base: Option[Snapshot],
      version: Long,
      actions: Seq[Action]): Unit = shared.synchronized {
    if (cached.map(_.version) == base.map(_.version)) {
      // The commit has already succeeded; a state we cannot replay is simply not cached.
      shared.cached =
        scala.util.Try(LogReplay.replay(tablePath, base, Seq(version -> actions))).toOption
    }
  }

  /** After a checkpoint of `version`, later replays from the cache build on its state. */
  private[transaction] def recordStateBase(version: Long, base: StateBase): Unit =
    shared.synchronized {
      shared.cached = cached.map(c => if (c.version == version) c.withStateBase(base) else c)
    }

  /** The snapshot we cached for `version`, if it is the one cached. */
  private[transaction] def cachedSnapshot(version: Long): Option[Snapshot] =
    cached.filter(_.version == version)

  private[transaction] def lastCheckpointPath: Path =
    new Path(logPath, TransactionLog.LastCheckpointName)

  private def load(target: Long, versions: Seq[Long]): Snapshot =
    load(target, versions, lastCheckpoint())

  private def load(target: Long, versions: Seq[Long], pointer: Option[LastCheckpoint])
      : Snapshot = {
    val present = versions.toSet
    val hit = cached.filter(_.version == target)
    if (hit.isDefined) return hit.get
    val checkpoint = checkpointAtOrBefore(target, pointer, present)
    val fromCache = cached.filter { c =>
      c.version < target && checkpoint.forall(_.version <= c.version)
    }
    val base = fromCache.orElse(checkpoint.map(readCheckpoint(_, versions)))
    val from = base.map(_.version + 1).getOrElse(0L)
    val files = (from to target).map { v =>
      if (!present.contains(v)) {
        if (base.isEmpty && versions.headOption.forall(_ > v)) {
          throw IndexTablesErrors.versionRemoved(tablePath, target, earliestReadable(versions))
        }
        throw IndexTablesErrors.missingVersionFile(tablePath, VersionFiles.fileName(v), target)
      }
      v -> readVersion(v)
    }
    val snapshot = LogReplay.replay(tablePath, base, files)
    shared.synchronized {
      if (cached.forall(_.version < snapshot.version)) shared.cached = Some(snapshot)
    }
    snapshot
  }

  /**
   * The checkpoint to start `target` from: the one `_last_checkpoint` names when it is not
   * newer than `target`; otherwise (time travel, or no pointer while version files are
   * missing) the newest state directory or JSON checkpoint at or before `target`.
   */
  private def checkpointAtOrBefore(
      target: Long,
      pointer: Option[LastCheckpoint],
      present: Set[Long]): Option[CheckpointReader.Source] =
    pointer.filter(_.version <= target) match {
      case Some(cp) => Some(CheckpointReader.sourceOf(cp))
      case None if pointer.isEmpty && (0L to target).forall(present.contains) => None
      case None => listCheckpoints().filter(_.version <= target).lastOption
    }

  /** Every checkpoint on storage, ascending by version (an Avro state wins a tie). */
  private def listCheckpoints(): Seq[CheckpointReader.Source] = {
    val avro = stateVersions().map(v =>
      CheckpointReader.AvroSource(v, LastCheckpoint.stateDirName(v)): CheckpointReader.Source)
    val json = store.list(logPath)
      .flatMap(p => CheckpointReader.versionOfJsonCheckpoint(p.getName))
      .map(v => CheckpointReader.JsonSource(v): CheckpointReader.Source)
    (json ++ avro).groupBy(_.version).toSeq.sortBy(_._1).map { case (_, s) =>
      s.find(_.isInstanceOf[CheckpointReader.AvroSource]).getOrElse(s.head)
    }
  }

  /** Versions of the state directories that hold a `_manifest.avro`. */
  private def stateVersions(): Seq[Long] =
    store.listDirectories(logPath).flatMap { d =>
      LastCheckpoint.versionOfStateDir(d.getName)
        .filter(_ => store.exists(new Path(d, state.AvroStateReader.ManifestFileName)))
    }.sorted

  private def earliestReadable(versions: Seq[Long]): Option[Long] = {
    val cps = listCheckpoints().map(_.version)
    (cps.headOption.toSeq ++ versions.headOption.filter(_ == 0L)).reduceOption(_ min _)
  }

  private def readCheckpoint(source: CheckpointReader.Source, versions: Seq[Long]): Snapshot =
    CheckpointReader.read(
      tablePath,
      logPath,
      store,
      source,
      settings.stateReadParallelism,
      versions,
      readVersion)

  private def readVersion(version: Long): Seq[Action] = {
    val file = VersionFiles.path(logPath, version)
    val bytes =
      try store.read(file)
      catch {
        case e: FileNotFoundException =>
          throw IndexTablesErrors.unreadableVersionFile(file, "the file disappeared", e)
      }
    val actions = VersionFiles.decode(file, bytes)
    actions.foreach {
      case p: ProtocolAction => TableFeatures.checkReadable(tablePath, Some(file), p)
      case _ =>
    }
    actions
  }

  /** The checkpoint pointer, or None when absent or unreadable (then the JSON log is used). */
  def lastCheckpoint(): Option[LastCheckpoint] = {
    val file = lastCheckpointPath
    if (!store.exists(file)) None
    else {
      try Some(LastCheckpoint.fromJson(store.read(file)))
      catch {
        // An unreadable pointer must not make the JSON log unreadable; it is ignored.
        case NonFatal(_) => None
      }
    }
  }

  override def toString: String = s"TransactionLog($tablePath)"
}

/**
 * Factory of [[TransactionLog]] handles. The state they share is cached per table, keyed, as
 * Delta keys its log cache, by the qualified path and the file-system options only: the settings
 * of an operation, and whatever else a read's options hold, never split the cache.
 */
object TransactionLog {

  /** The highest reader protocol version this code can read. */
  val MaxReaderVersion: Int = 4

  /** The highest writer protocol version this code can write. */
  val MaxWriterVersion: Int = 4

  val LogDirName: String = "_transaction_log"
  val LastCheckpointName: String = "_last_checkpoint"

  private val CacheSize = 64

  /** What every handle of one table shares: the newest snapshot built. Guarded by itself. */
  private[transaction] final class SharedState {
    @volatile var cached: Option[Snapshot] = None
  }

  private val cache = new BoundedCache[(String, Map[String, String]), SharedState](CacheSize)

  /**
   * A handle of the table at `tablePath` (qualified against its file system) that works with
   * `settings`. `fileSystemOptions` are the options that change how the files are reached (they
   * are already applied to `hadoopConf`); they key the shared state.
   */
  def forTable(
      tablePath: String,
      hadoopConf: Configuration,
      settings: LogSettings,
      fileSystemOptions: Map[String, String] = Map.empty): TransactionLog = {
    val raw = new Path(tablePath)
    val qualified = LogStore.qualify(raw, hadoopConf)
    val key = (qualified.toString, fileSystemOptions)
    val shared = cache.getOrElseUpdate(key)(new SharedState)
    new TransactionLog(qualified, hadoopConf, settings, shared)
  }

  /** Drops every cached state (tests, or after a table was deleted and re-created). */
  def clearCache(): Unit = cache.clear()

  /**
   * Drops the cached state of the table at `tablePath` (qualified as [[forTable]] does), under
   * any file-system options; how many entries. The next handle reads the log afresh.
   */
  def invalidate(tablePath: String, hadoopConf: Configuration): Int = {
    val qualified = LogStore.qualify(new Path(tablePath), hadoopConf).toString
    cache.removeIf(_._1 == qualified)
  }

  /** Drops every cached state; how many entries. */
  def invalidateAll(): Int = cache.removeIf(_ => true)
}

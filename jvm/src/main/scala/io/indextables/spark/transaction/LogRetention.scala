package io.indextables.spark.transaction

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

import io.indextables.spark.transaction.state.AvroStateReader

/**
 * Removes what a checkpoint made unnecessary, per the retention keys:
 *  - version files older than the checkpoint `_last_checkpoint` names and older than
 *    `purge.txLogRetentionHours` (never a version the checkpoint does not cover), as Delta's
 *    log cleanup does;
 *  - state directories beyond the newest `state.retention.versions` that are also older than
 *    `state.retention.hours` (never the one the pointer names);
 *  - shared manifests that no retained state references and that are older than
 *    `state.gc.minManifestAgeHours`, so a manifest an in-flight writer just wrote survives.
 * Driver side; stateless. Failures are logged: retention never fails the write it follows.
 */
object LogRetention {

  private val logger = LoggerFactory.getLogger(getClass)
  private val HourMs = 3600L * 1000L

  /** What one cleanup removed (or, planned only, would remove). */
  final case class Result(versionFiles: Seq[Long], stateDirs: Seq[String], manifests: Seq[String])

  /**
   * What a cleanup would remove, nothing deleted yet: the versions, state directories and
   * manifests, with their paths. `txLogRetentionHours` overrides the log's setting (PURGE's
   * TRANSACTION LOG RETENTION clause).
   */
  final case class Plan(
      versionFiles: Seq[Long],
      stateDirs: Seq[Path],
      manifests: Seq[Path],
      checkpointFiles: Seq[Path] = Nil) {
    def result: Result = Result(versionFiles, stateDirs.map(_.getName), manifests.map(_.getName))
    def isEmpty: Boolean =
      versionFiles.isEmpty && stateDirs.isEmpty && manifests.isEmpty && checkpointFiles.isEmpty
  }

  // A JSON checkpoint file: single (<v>.checkpoint.json), a multi-part manifest or a part.
  private val JsonCheckpointFile = """^(\d{20})\.checkpoint(\.[0-9a-f]+\.\d{5})?\.json$""".r

  /**
   * What TRUNCATE TIME TRAVEL removes once a checkpoint of `version` exists: every version file
   * before it, every JSON checkpoint file before it, and every Avro state directory before it
   * that the state of `version` does not read manifests from. Whatever their age.
   */
  def truncatePlan(log: TransactionLog, version: Long): Plan = {
    val store = log.store
    val logPath = log.logPath
    val versions = log.listVersions().filter(_ < version)
    val kept = LastCheckpoint.stateDirName(version)
    val used: Set[String] =
      if (!store.exists(new Path(new Path(logPath, kept), AvroStateReader.ManifestFileName)))
        Set.empty
      else AvroStateReader.readManifest(store, logPath, kept).manifests.map { m =>
        AvroStateReader.resolveManifestPath(logPath, kept, m.path).toUri.getPath
      }.toSet
    val stateDirs = store.listDirectories(logPath).filter { d =>
      LastCheckpoint.versionOfStateDir(d.getName).exists(_ < version) && {
        val prefix = d.toUri.getPath.stripSuffix("/") + "/"
        !used.exists(_.startsWith(prefix))
      }
    }
    val checkpoints = store.list(logPath).filter { p =>
      p.getName match {
        case JsonCheckpointFile(v, _) => v.toLong < version
        case _ => false
      }
    }
    Plan(versions, stateDirs, Nil, checkpoints)
  }

  def cleanup(log: TransactionLog, now: Long = System.currentTimeMillis()): Result = {
    val p = plan(log, now)
    apply(log, p)
    p.result
  }

  /**
   * `restOn`: the version of a checkpoint the caller is about to write (a dry run's PURGE plans
   * as if it had), which the version files may rest on instead of the pointer's.
   */
  def plan(
      log: TransactionLog,
      now: Long,
      txLogRetentionHours: Option[Long] = None,
      restOn: Option[Long] = None): Plan = {
    val store = log.store
    val logPath = log.logPath
    val settings = log.settings
    val logCutoff = now - txLogRetentionHours.getOrElse(settings.txLogRetentionHours) * HourMs
    val last = log.lastCheckpoint()
    val base = (last.map(_.version).toSeq ++ restOn).reduceOption(_ max _)
    // Delta's log cleanup: a version file goes once it is older than the log retention and a
    // checkpoint after it exists, so every version from that checkpoint on stays readable.
    val versions = base.toSeq.flatMap { b =>
      expiredVersions(log, logCutoff).filter(_ < b)
    }
    val pointer = last.getOrElse(return Plan(versions, Nil, Nil))
    val stateCutoff = now - settings.stateRetentionHours * HourMs
    val manifestCutoff = now - settings.minManifestAgeHours * HourMs

    val pointed = pointer.stateDir.filter(_ => pointer.isAvroState)
    val stateDirs = store.listDirectories(logPath)
      .filter(d => LastCheckpoint.versionOfStateDir(d.getName).isDefined)
      .filter(d => store.exists(new Path(d, AvroStateReader.ManifestFileName)))
      .sortBy(_.getName)
    val keepNewest = stateDirs.takeRight(settings.stateRetentionVersions).map(_.getName).toSet
    val (retained, expired) = stateDirs.partition { d =>
      keepNewest.contains(d.getName) || pointed.contains(d.getName) ||
      LastCheckpoint.versionOfStateDir(d.getName).exists(_ > pointer.version) ||
      store.modificationTime(new Path(d, AvroStateReader.ManifestFileName)) >= stateCutoff
    }

    val reachable = retained.flatMap { d =>
      try {
        AvroStateReader.readManifest(store, logPath, d.getName).manifests.map { m =>
          AvroStateReader.resolveManifestPath(logPath, d.getName, m.path).toUri.getPath
        }
      } catch {
        // A state we cannot read may reference anything: collect nothing this time.
        case NonFatal(_) => return Plan(versions, expired, Nil)
      }
    }.toSet
    val manifestDir = new Path(logPath, AvroStateReader.SharedManifestDir)
    val orphans = store.list(manifestDir)
      .filter(p => p.getName.startsWith("manifest-") && p.getName.endsWith(".avro"))
      .filterNot(p => reachable.contains(p.toUri.getPath))
      .filter(p => store.modificationTime(p) < manifestCutoff)
    Plan(versions, expired, orphans)
  }

  /** The versions whose files are older than `cutoff` (epoch ms), whatever checkpoint exists. */
  def expiredVersions(log: TransactionLog, cutoff: Long): Seq[Long] =
    log.listVersions().filter { v =>
      log.store.modificationTime(VersionFiles.path(log.logPath, v)) < cutoff
    }

  /** Deletes what `plan` lists. */
  def apply(log: TransactionLog, plan: Plan): Unit = {
    val store = log.store
    val logPath = log.logPath
    plan.versionFiles.foreach { v =>
      store.delete(VersionFiles.path(logPath, v))
      store.delete(new Path(logPath, s".${VersionFiles.fileName(v)}.crc"))
      store.delete(CommitInfo.path(logPath, v))
      store.delete(new Path(
        new Path(logPath, CommitInfo.DirName),
        s".${VersionFiles.fileName(v)}.crc"))
    }
    plan.stateDirs.foreach { d =>
      // The state's own manifest first: a directory half deleted is then no state at all.
      val (own, rest) = store.list(d).partition(_.getName == AvroStateReader.ManifestFileName)
      (own ++ rest).foreach(store.delete)
      store.delete(d)
    }
    plan.checkpointFiles.foreach(store.delete)
    val manifestDir = new Path(logPath, AvroStateReader.SharedManifestDir)
    plan.manifests.foreach { p =>
      store.delete(p)
      store.delete(new Path(manifestDir, s".${p.getName}.crc"))
    }
    if (!plan.isEmpty) {
      logger.info(s"Retention on ${log.tablePath}: removed ${plan.versionFiles.size} version " +
        s"files, ${plan.stateDirs.size} states and ${plan.manifests.size} orphaned manifests")
    }
  }
}

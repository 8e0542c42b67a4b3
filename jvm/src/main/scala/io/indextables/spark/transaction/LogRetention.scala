package io.indextables.spark.transaction

import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

import io.indextables.spark.transaction.state.AvroStateReader

/**
 * Removes what a checkpoint made unnecessary, per the retention keys:
 *  - version files older than the checkpoint `_last_checkpoint` names and older than
 *    `purge.txLogRetentionHours` (never a version the checkpoint does not cover);
 *  - state directories beyond the newest `state.retention.versions` that are also older than
 *    `state.retention.hours` (never the one the pointer names);
 *  - shared manifests that no retained state references and that are older than
 *    `state.gc.minManifestAgeHours`, so a manifest an in-flight writer just wrote survives.
 * Driver side; stateless. Failures are logged: retention never fails the write it follows.
 */
object LogRetention {

  private val logger = LoggerFactory.getLogger(getClass)
  private val HourMs = 3600L * 1000L

  /** What one cleanup removed. */
  final case class Result(versionFiles: Seq[Long], stateDirs: Seq[String], manifests: Seq[String])

  def cleanup(log: TransactionLog, now: Long = System.currentTimeMillis()): Result = {
    val store = log.store
    val logPath = log.logPath
    val settings = log.settings
    val pointer = log.lastCheckpoint().getOrElse(return Result(Nil, Nil, Nil))
    val logCutoff = now - settings.txLogRetentionHours * HourMs
    val stateCutoff = now - settings.stateRetentionHours * HourMs
    val manifestCutoff = now - settings.minManifestAgeHours * HourMs

    val versions = log.listVersions().filter(_ < pointer.version).filter { v =>
      store.modificationTime(VersionFiles.path(logPath, v)) < logCutoff
    }
    versions.foreach { v =>
      store.delete(VersionFiles.path(logPath, v))
      store.delete(new Path(logPath, s".${VersionFiles.fileName(v)}.crc"))
      store.delete(CommitInfo.path(logPath, v))
      store.delete(new Path(
        new Path(logPath, CommitInfo.DirName),
        s".${VersionFiles.fileName(v)}.crc"))
    }

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
    expired.foreach { d =>
      store.list(d).foreach(store.delete)
      store.delete(d)
    }

    val reachable = retained.flatMap { d =>
      try {
        AvroStateReader.readManifest(store, logPath, d.getName).manifests.map { m =>
          AvroStateReader.resolveManifestPath(logPath, d.getName, m.path).toUri.getPath
        }
      } catch {
        // A state we cannot read may reference anything: collect nothing this time.
        case NonFatal(_) => return Result(versions, expired.map(_.getName), Nil)
      }
    }.toSet
    val manifestDir = new Path(logPath, AvroStateReader.SharedManifestDir)
    val orphans = store.list(manifestDir)
      .filter(p => p.getName.startsWith("manifest-") && p.getName.endsWith(".avro"))
      .filterNot(p => reachable.contains(p.toUri.getPath))
      .filter(p => store.modificationTime(p) < manifestCutoff)
    orphans.foreach { p =>
      store.delete(p)
      store.delete(new Path(manifestDir, s".${p.getName}.crc"))
    }
    val result = Result(versions, expired.map(_.getName), orphans.map(_.getName))
    if (versions.nonEmpty || expired.nonEmpty || orphans.nonEmpty) {
      logger.info(s"Retention on ${log.tablePath}: removed ${versions.size} version files, " +
        s"${expired.size} states and ${orphans.size} orphaned manifests")
    }
    result
  }
}

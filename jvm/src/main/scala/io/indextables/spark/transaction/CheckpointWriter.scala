package io.indextables.spark.transaction

import java.util.UUID

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.hadoop.fs.Path
import org.slf4j.LoggerFactory

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.LogSettings
import io.indextables.spark.transaction.state.{AvroStateCodec, AvroStateConfig, AvroStateWriter}
import io.indextables.spark.storage.LogStore

/**
 * Writes checkpoints: every `checkpoint.interval` versions after a commit, or on request.
 *
 * The format follows `spark.indextables.state.format`: `avro` writes an Avro state (see
 * [[AvroStateWriter]]), `json` a single-file JSON checkpoint, or a multi-part one when the
 * actions exceed `checkpoint.actionsPerPart`. The checkpoint is written completely before
 * `_last_checkpoint` is replaced, so an interrupted checkpoint leaves the table readable at its
 * previous checkpoint. After a checkpoint that follows a commit, [[LogRetention]] removes what
 * it made unnecessary. Driver side; stateless.
 */
object CheckpointWriter {

  private val logger = LoggerFactory.getLogger(getClass)
  private val mapper = new ObjectMapper()

  /** True when a commit of `version` should be followed by a checkpoint. */
  def due(settings: LogSettings, version: Long): Boolean =
    settings.checkpointEnabled && version > 0 && version % settings.checkpointInterval == 0

  /**
   * Checkpoints `version` if it is due; a failure is logged, never thrown, because the commit
   * it follows has succeeded and the table stays readable from its version files.
   */
  private[transaction] def afterCommit(log: TransactionLog, version: Long): Unit =
    if (due(log.settings, version)) {
      try {
        checkpoint(log, log.cachedSnapshot(version).getOrElse(log.snapshotAt(version)))
        LogRetention.cleanup(log)
      } catch {
        case NonFatal(e) =>
          logger.warn(
            s"Checkpoint of version $version of ${log.tablePath} failed; the table " +
              "stays readable from its version files",
            e)
      }
    }

  /**
   * Writes a checkpoint of `snapshot` and points `_last_checkpoint` at it; returns the pointer.
   * A write that fails on storage is retried with backoff (`spark.indextables.state.retry.*`),
   * each attempt reading the checkpoint pointer, and so the state it builds on, afresh. Files
   * of a failed attempt are left unreferenced, never half-referenced.
   */
  def checkpoint(log: TransactionLog, snapshot: Snapshot, forceCompaction: Boolean = false)
      : LastCheckpoint = checkpointWithRetries(log.store, log, snapshot, forceCompaction)

  private[transaction] def checkpointWithRetries(
      store: LogStore,
      log: TransactionLog,
      snapshot: Snapshot,
      forceCompaction: Boolean): LastCheckpoint = {
    val maxAttempts = log.settings.stateRetryMaxAttempts
    var attempt = 1
    while (true) {
      try return checkpointWith(store, log, snapshot, forceCompaction)
      catch {
        case e: java.io.IOException if attempt < maxAttempts =>
          val delay = Backoff.delayMs(
            attempt,
            log.settings.stateRetryBaseDelayMs,
            log.settings.stateRetryMaxDelayMs)
          logger.warn(s"Writing the state of version ${snapshot.version} of ${log.tablePath} " +
            s"failed (${e.getMessage}); retrying in $delay ms (attempt ${attempt + 1} of " +
            s"$maxAttempts)")
          Thread.sleep(delay)
          attempt += 1
      }
    }
    throw IndexTablesErrors.internalError("the state write retry loop ended without a result")
  }

  private[transaction] def checkpointWith(
      store: LogStore,
      log: TransactionLog,
      snapshot: Snapshot,
      forceCompaction: Boolean): LastCheckpoint = {
    val settings = log.settings
    val pointer = log.lastCheckpoint()
    val cp =
      if (settings.stateFormat == "avro") writeAvro(store, log, snapshot, pointer, forceCompaction)
      else writeJson(store, log.logPath, snapshot, settings.checkpointActionsPerPart)
    // Never move the pointer backwards (a concurrent writer may have checkpointed later).
    if (log.lastCheckpoint().forall(_.version < cp.version)) {
      store.overwrite(log.lastCheckpointPath, cp.toJson)
    }
    logger.info(s"Checkpointed version ${cp.version} of ${log.tablePath} (${cp.format.get})")
    cp
  }

  private def writeAvro(
      store: LogStore,
      log: TransactionLog,
      snapshot: Snapshot,
      pointer: Option[LastCheckpoint],
      forceCompaction: Boolean): LastCheckpoint = {
    val settings = log.settings
    val config = AvroStateConfig(
      codec = AvroStateCodec.codec(settings.stateCompression, settings.stateCompressionLevel),
      entriesPerManifest = settings.stateEntriesPerManifest,
      tombstoneThreshold = settings.compactionTombstoneThreshold,
      maxManifests = settings.compactionMaxManifests,
      forceCompaction = forceCompaction,
      renormalizeThreshold = settings.schemaRenormalizeThreshold
    )
    // Incremental only on the state the pointer names, and only when the snapshot was replayed
    // from it (then it knows which entries later versions replaced); otherwise compaction.
    val base = snapshot.stateBase.filter { b =>
      pointer.exists(p =>
        p.isAvroState && p.version < snapshot.version &&
          p.stateDir.getOrElse(LastCheckpoint.stateDirName(p.version)) == b.stateDir)
    }
    val result = AvroStateWriter.write(store, log.logPath, snapshot, base, config)
    result.stateBase.foreach(b => log.recordStateBase(snapshot.version, b))
    LastCheckpoint(
      version = snapshot.version,
      size = snapshot.numFiles.toLong,
      sizeInBytes = snapshot.sizeInBytes,
      numFiles = snapshot.numFiles.toLong,
      createdTime = result.manifest.createdAt,
      format = Some(LastCheckpoint.AvroStateFormat),
      stateDir = Some(result.stateDir)
    )
  }

  private def writeJson(store: LogStore, logPath: Path, snapshot: Snapshot, perPart: Int)
      : LastCheckpoint = {
    val version = snapshot.version
    val header: Seq[Action] = Seq(snapshot.protocol, snapshot.metadata) ++ snapshot.mergeSkips
    val actions = header ++ snapshot.allFiles
    val file = new Path(logPath, CheckpointReader.jsonCheckpointName(version))
    val now = System.currentTimeMillis()
    val base = LastCheckpoint(
      version,
      actions.size.toLong,
      snapshot.sizeInBytes,
      snapshot.numFiles.toLong,
      now)
    if (actions.size <= perPart) {
      store.putIfAbsent(file, VersionFiles.encode(actions, compressed = true))
      base.copy(format = Some(LastCheckpoint.JsonFormat))
    } else {
      val id = UUID.randomUUID().toString.replace("-", "").take(12)
      val parts = actions.grouped(perPart).zipWithIndex.map { case (chunk, i) =>
        val name = f"$version%020d.checkpoint.$id.${i + 1}%05d.json"
        store.putIfAbsent(new Path(logPath, name), VersionFiles.encode(chunk, compressed = true))
        name
      }.toVector
      val m = mapper.createObjectNode()
      m.put("version", version)
      m.put("checkpointId", id)
      val arr = m.putArray("parts")
      parts.foreach(arr.add)
      m.put("createdTime", now)
      m.put("format", "json")
      val (winnerId, winnerParts) =
        if (store.putIfAbsent(file, mapper.writeValueAsBytes(m))) (id, parts.size)
        else {
          // Another writer's checkpoint of this version won; ours is left unreferenced.
          val other = mapper.readTree(store.read(file))
          (other.get("checkpointId").asText(), other.get("parts").size())
        }
      base.copy(
        parts = Some(winnerParts),
        checkpointId = Some(winnerId),
        format = Some(LastCheckpoint.MultiPartFormat))
    }
  }
}

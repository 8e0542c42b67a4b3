package io.indextables.spark.transaction

import org.slf4j.LoggerFactory

import io.indextables.spark.IndexTablesErrors

/**
 * One optimistic commit to a table's log, on the driver.
 *
 * [[commit]] reads the newest snapshot (None for a table without version 0), asks the caller for
 * the actions, and writes them as the next version with put-if-absent. If another writer took
 * that version first, it waits (exponential backoff with jitter), re-reads the newest state and
 * asks the caller again, so `buildActions` must be a pure function of the snapshot it is given,
 * and may run several times. Thread-safe: each call of `commit` is independent.
 */
final class OptimisticTransaction private[transaction] (log: TransactionLog) {

  private val logger = LoggerFactory.getLogger(classOf[OptimisticTransaction])

  private val maxAttempts = log.settings.retryMaxAttempts
  private val baseDelayMs = log.settings.retryBaseDelayMs
  private val maxDelayMs = log.settings.retryMaxDelayMs
  private val compressed = log.settings.compression

  /**
   * Commits the actions that `buildActions` returns for the newest state and returns the version
   * written. For a new table (snapshot None) the actions must include a protocol and a metadata
   * action. Throws [[io.indextables.spark.exceptions.ConcurrentCommitException]] after `retry.maxAttempts` lost races.
   * The operation and its `parameters` are recorded beside the version (see [[CommitInfo]]).
   */
  def commit(
      operation: String,
      parameters: Map[String, String] = Map.empty,
      metrics: Map[String, String] = Map.empty)(
      buildActions: Option[Snapshot] => Seq[Action]): Long = {
    var attempt = 1
    while (true) {
      val base = log.latestSnapshotOption()
      val version = base.map(_.version + 1).getOrElse(0L)
      val actions = buildActions(base)
      validate(operation, base, actions)
      val file = VersionFiles.path(log.logPath, version)
      if (log.store.putIfAbsent(file, VersionFiles.encode(actions, compressed))) {
        log.recordCommit(base, version, actions)
        logger.info(s"Committed '$operation' as version $version of ${log.tablePath}")
        recordInfo(
          version,
          CommitInfo(operation, parameters, System.currentTimeMillis(), metrics))
        CheckpointWriter.afterCommit(log, version)
        return version
      }
      if (attempt >= maxAttempts) {
        throw IndexTablesErrors.tooManyConflicts(log.tablePath, operation, attempt)
      }
      val delay = Backoff.delayMs(attempt, baseDelayMs, maxDelayMs)
      logger.info(s"Version $version of ${log.tablePath} was taken by another writer; " +
        s"retrying '$operation' in $delay ms (attempt ${attempt + 1} of $maxAttempts)")
      Thread.sleep(delay)
      attempt += 1
    }
    throw IndexTablesErrors.internalError("the commit retry loop ended without a result")
  }

  /** The commit succeeded with its version file; its description is a label, never a failure. */
  private def recordInfo(version: Long, info: CommitInfo): Unit =
    try log.store.overwrite(CommitInfo.path(log.logPath, version), CommitInfo.encode(info))
    catch {
      case e: Exception =>
        logger.warn(s"Version $version of ${log.tablePath} is committed, but its commit " +
          s"info could not be written: ${e.getMessage}")
    }

  private def validate(operation: String, base: Option[Snapshot], actions: Seq[Action]): Unit = {
    def invalid(reason: String) =
      IndexTablesErrors.invalidCommit(log.tablePath, operation, reason)
    if (actions.isEmpty) throw invalid("no actions to commit")
    val protocols = actions.collect { case p: ProtocolAction => p }
    val metadatas = actions.collect { case m: MetadataAction => m }
    if (protocols.size > 1) throw invalid("more than one protocol action")
    if (metadatas.size > 1) throw invalid("more than one metaData action")
    if (base.isEmpty && (protocols.isEmpty || metadatas.isEmpty)) {
      throw invalid("a new table's first commit must hold a protocol and a metaData action")
    }
    val protocol = protocols.headOption.orElse(base.map(_.protocol))
    protocol.foreach(p => TableFeatures.checkWritable(log.tablePath, p))
    // Replay takes a path's last action in a version: a remove after an add of the same path
    // would drop the entry the commit meant to keep.
    val addedAt = actions.zipWithIndex.collect { case (a: AddAction, i) => a.path -> i }.toMap
    actions.zipWithIndex.collectFirst {
      case (r: RemoveAction, i) if addedAt.get(r.path).exists(_ < i) => r.path
    }.foreach(p => throw invalid(s"split $p is added before it is removed"))
    if (actions.exists { case a: AddAction => a.deletionVector.isDefined; case _ => false } &&
      !protocol.exists(TableFeatures.hasDeletionVectors))
      throw invalid("it adds a deletion vector to a table without the deletionVectors feature")
  }
}

package io.indextables.spark.transaction

/**
 * The last micro-batch a streaming query committed to a table, as Delta's SetTransaction
 * records it: the query's id (Spark's `StreamingQuery.id`, the same across restarts from one
 * checkpoint) and its batch (epoch) id. A batch with an epoch at or below the recorded one was
 * committed already, and is skipped when Spark replays it after a failure.
 *
 * Where it lives: in the table's metadata configuration, under
 * `indextables.streaming.txn.<queryId>`, written by the very version file that commits the
 * batch's splits. Upstream readers refuse an unknown action in a version file, so a `txn`
 * action of our own is out; the commit record (`_commit_info/<version>.json`) is written after
 * the version file and may be missing when a writer dies in between, so it cannot decide
 * whether a batch is in the table. A metadata action is the one place that is both inside the
 * atomic version file and kept whole by checkpoints, Avro states and log retention (see
 * docs/protocol-extensions.md). Immutable.
 */
final case class StreamingTxn(queryId: String, epochId: Long) {

  /** Whether `snapshot` holds this batch already (this epoch or a later one of the query). */
  def committedIn(snapshot: Option[Snapshot]): Boolean =
    StreamingTxn.recordedEpoch(snapshot, queryId).exists(_ >= epochId)

  /** `metadata` recording this batch as its query's latest. */
  def recordIn(metadata: MetadataAction): MetadataAction =
    metadata.copy(configuration =
      metadata.configuration + (StreamingTxn.key(queryId) -> epochId.toString))
}

object StreamingTxn {

  /** The prefix of the metadata configuration keys that record each query's latest batch. */
  val KeyPrefix = "indextables.streaming.txn."

  def key(queryId: String): String = KeyPrefix + queryId

  /** Whether a metadata configuration key is a streaming record (not a table property). */
  def isRecordKey(key: String): Boolean = key.startsWith(KeyPrefix)

  /** The latest batch `queryId` committed to the table of `snapshot`, if any. */
  def recordedEpoch(snapshot: Option[Snapshot], queryId: String): Option[Long] =
    snapshot.flatMap(_.metadata.configuration.get(key(queryId)))
      .flatMap(v => scala.util.Try(v.trim.toLong).toOption)

  /** Every query's latest batch recorded in `metadata`, by query id. */
  def all(metadata: MetadataAction): Map[String, Long] =
    metadata.configuration.collect {
      case (k, v) if isRecordKey(k) && scala.util.Try(v.toLong).isSuccess =>
        k.stripPrefix(KeyPrefix) -> v.toLong
    }
}

package io.indextables.spark.write

import scala.util.control.ControlThrowable

import org.apache.spark.sql.connector.write.{BatchWrite, DataWriterFactory, PhysicalWriteInfo, WriterCommitMessage}
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.SparkSession

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.IndexTablesOptions
import io.indextables.spark.filters.SplitPruner
import io.indextables.spark.merge.{MergeOnWrite, MergeOnWriteSettings}
import io.indextables.spark.purge.PurgeOnWrite
import io.indextables.spark.transaction.{AddAction, Snapshot, TransactionLog}

/**
 * The driver's side of one write: hands the plan to tasks, then commits every task's splits as
 * one new log version, with the splits the [[WriteMode]] replaces removed in the same version.
 * A replaceWhere first rewrites, in a Spark job of its own, the splits that hold rows on both
 * sides of its predicate, keeping the rows it does not replace. The removals are decided against
 * the snapshot the write was planned on; a commit that finds those splits gone, or new splits
 * the write would have had to replace, fails rather than lose them. On failure or abort it
 * deletes the splits this write made, and nothing else.
 *
 * @param base the table's snapshot when the write was planned (None for a new table)
 * @param log  the table's transaction log, with the write's settings (driver side)
 * @param fileSystemOptions the write's options that configure file access, for the rewrite's read
 * @param mergeOnWrite      merge on write's settings, when it is enabled: once committed, the
 *                          write may start a merge of the table's small splits ([[MergeOnWrite]])
 * @param settings the write's resolved settings, for purge-on-write after the commit
 */
final class IndexTables4SparkBatchWrite(
    tableName: String,
    val plan: WritePlan,
    mode: WriteMode,
    base: Option[Snapshot],
    log: TransactionLog,
    fileSystemOptions: Map[String, String] = Map.empty,
    mergeOnWrite: Option[MergeOnWriteSettings] = None,
    settings: IndexTablesOptions = IndexTablesOptions.Defaults) extends BatchWrite {

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory =
    new IndexTables4SparkDataWriterFactory(plan)

  override def useCommitCoordinator(): Boolean = true

  private lazy val tableSchema: StructType = plan.writeSchema
  private lazy val pruner = new SplitPruner(
    tableSchema,
    plan.indexSchema.partitionColumns,
    plan.timeZone,
    plan.statsTruncateAt)

  override def commit(messages: Array[WriterCommitMessage]): Unit = {
    commitVersion(messages, None)
    ()
  }

  /**
   * Commits the tasks' splits as one version, then runs purge and merge on write. With
   * `stream`, the version also records the streaming batch ([[StreamingBatch]]); a batch the
   * newest snapshot records already is not committed again: its splits are deleted and the
   * result is None. Otherwise the version written.
   */
  private[write] def commitVersion(
      messages: Array[WriterCommitMessage],
      stream: Option[StreamingBatch]): Option[Long] = {
    val adds = addsOf(messages.toSeq)
    var kept: Seq[AddAction] = Nil
    val version =
      try {
        val (whole, rewritten) = mode match {
          case rw: WriteMode.ReplaceWhere => touched(rw)
          case _ => (Nil, Nil)
        }
        kept = mode match {
          case rw: WriteMode.ReplaceWhere if rewritten.nonEmpty => keepRows(rw, rewritten)
          case _ => Nil
        }
        // The first version of a table is its creation, whatever the write's mode.
        val operation =
          if (base.isEmpty) "CREATE"
          else stream.map(_ => StreamingBatch.Operation)
            .getOrElse(mode.operation)
        val parameters = mode.parameters ++ plan.optimized.map(_.parameters).getOrElse(Map.empty) ++
          stream.map(_.parameters).getOrElse(Map.empty)
        log.startTransaction().commit(
          operation,
          parameters,
          metrics(messages.toSeq, adds ++ kept)) {
          current =>
            // Checked on every attempt: a replay may race the commit it replays.
            if (stream.exists(_.txn.committedIn(current))) throw AlreadyCommitted
            val removed = mode match {
              case WriteMode.Append => Nil
              case WriteMode.Truncate => current.map(_.allFiles).getOrElse(Nil)
              case rw: WriteMode.ReplaceWhere =>
                unchanged(current, whole ++ rewritten, f => pruner.mayMatch(f, rw.filters))
                whole ++ rewritten
              case WriteMode.DynamicPartitions =>
                val partitions = adds.map(_.partitionValues).toSet
                unchanged(current, Nil, f => partitions.contains(f.partitionValues))
                current.toSeq.flatMap(_.allFiles).filter(f =>
                  partitions.contains(f.partitionValues))
            }
            CommitActions.build(
              current,
              plan,
              adds ++ kept,
              mode == WriteMode.Truncate,
              removed,
              stream.map(_.txn))
        }
      } catch {
        case AlreadyCommitted =>
          abort(messages)
          return None
        case e: Throwable =>
          abort(messages)
          delete(kept)
          throw e
      }
    PurgeOnWrite.afterWrite(log, settings)
    mergeOnWrite.foreach(merge =>
      MergeOnWrite.afterCommit(
        SparkSession.active,
        log,
        plan.hadoopConf.value,
        version,
        merge,
        () => PurgeOnWrite.afterMerge(log, settings)))
    Some(version)
  }

  /** The commit's answer when the streaming batch it would record is in the table already. */
  private object AlreadyCommitted extends ControlThrowable

  override def abort(messages: Array[WriterCommitMessage]): Unit = delete(addsOf(messages.toSeq))

  /** The commit record's metrics, named as Delta names them (see WriteSizeEstimator). */
  private def metrics(messages: Seq[WriterCommitMessage], adds: Seq[AddAction]) = {
    val written = messages.collect { case m: IndexTablesCommitMessage => m }
    val shuffle = written.map(_.shuffleBytes).sum
    Map(
      WriteSizeEstimator.NumFiles -> adds.size.toString,
      WriteSizeEstimator.NumOutputRows -> written.map(_.rows).sum.toString,
      WriteSizeEstimator.NumOutputBytes -> adds.map(_.size).sum.toString
    ) ++ (if (shuffle > 0) Map(WriteSizeEstimator.ShuffleBytesRead -> shuffle.toString) else Nil)
  }

  private def addsOf(messages: Seq[WriterCommitMessage]): Seq[AddAction] = messages.flatMap {
    case IndexTablesCommitMessage(a, _, _) => a
    case _ => Nil
  }

  private def delete(adds: Seq[AddAction]): Unit = {
    val uploader = new SplitUploader(plan)
    adds.foreach(uploader.deleteFiles)
  }

  /**
   * The live splits of `base` a replaceWhere touches: those whose rows all match (a predicate on
   * partition columns that is TRUE for the split's values), removed whole; and those that may
   * hold a matching row beside others, rewritten.
   */
  private def touched(rw: WriteMode.ReplaceWhere): (Seq[AddAction], Seq[AddAction]) = {
    val files = base.toSeq.flatMap(_.allFiles)
    val onPartitions = rw.filters.forall(_.references.forall(plan.indexSchema.isPartitionColumn))
    val whole =
      files.filter(f => onPartitions && pruner.isTrueForPartition(f.partitionValues, rw.filters))
    val rest = files.filterNot(whole.toSet).filter(f => pruner.mayMatch(f, rw.filters))
    (whole, rest)
  }

  /**
   * Fails the commit when a split this write replaces is no longer live in `current` as it was
   * in `base` (removed, or with a new deletion vector), or when a
   * split committed since `base` is one it would have had to replace (`replaces`).
   */
  private def unchanged(
      current: Option[Snapshot],
      removing: Seq[AddAction],
      replaces: AddAction => Boolean): Unit = {
    val live = current.toSeq.flatMap(_.allFiles)
    val liveKeys = live.map(_.fileKey).toSet
    val livePaths = liveKeys.map(_.path)
    // A split whose deletion vector changed since `base` counts as changed: the rows kept from
    // it were read with the old vector.
    removing.find(f => !liveKeys.contains(f.fileKey)).foreach { f =>
      val what = if (livePaths.contains(f.path)) "had rows deleted" else "was removed"
      throw IndexTablesErrors.overwriteConflict(
        tableName,
        mode.operation.toLowerCase,
        s"split ${f.path} $what")
    }
    val known = base.toSeq.flatMap(_.allFiles).map(_.path).toSet
    live.find(f => !known.contains(f.path) && replaces(f)).foreach { f =>
      throw IndexTablesErrors.overwriteConflict(
        tableName,
        mode.operation.toLowerCase,
        s"split ${f.path} was added")
    }
  }

  /**
   * Writes the rows of `splits` that the predicate does not replace (where it is FALSE or NULL)
   * into new splits, read from the planned snapshot, without committing them.
   */
  private def keepRows(rw: WriteMode.ReplaceWhere, splits: Seq[AddAction]): Seq[AddAction] = {
    val snapshot = base.getOrElse(throw IndexTablesErrors.internalError("a rewrite needs a table"))
    SplitRewrite.rewrite(
      plan,
      snapshot,
      splits,
      fileSystemOptions,
      Some(ReplaceWhereRows.kept(rw.filters)))
  }
}

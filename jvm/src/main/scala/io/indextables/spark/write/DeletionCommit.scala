package io.indextables.spark.write

import scala.collection.mutable
import scala.util.control.NonFatal

import org.apache.spark.sql.sources.Filter
import org.roaringbitmap.RoaringBitmap
import org.slf4j.LoggerFactory

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.filters.SplitPruner
import io.indextables.spark.transaction._

/**
 * The commit of a row-level change (DELETE, and the deleting half of UPDATE and MERGE): the
 * docs to delete from each split, read at snapshot `base`, become new deletion vectors (each the
 * split's old vector and the new docs), written beside their splits, and one version holds, for
 * each changed split, the remove of its entry and the add of the same path with its new vector
 * (a split left without a row is only removed), the splits written for new and updated rows, and
 * the `deletionVectors` feature when the table lacks it. Driver side.
 *
 * A split the commit changes must be live in the newest version as `base` had it (same path,
 * same vector); a split another commit removed or gave a new vector since fails the commit with
 * `INDEXTABLES_CONCURRENT_COMMIT`, so no deleted row is resurrected and none lost. Appends since
 * `base` commit beside it. On any failure the vector files it wrote are deleted.
 */
object DeletionCommit {

  private val logger = LoggerFactory.getLogger(getClass)

  /**
   * What the commit did: its version (None when nothing changed) and Delta's metrics. Deleted
   * rows are those deleted and not written again (an updated row counts as updated only).
   */
  final case class Result(
      version: Option[Long],
      deletedRows: Long,
      updatedRows: Long,
      insertedRows: Long,
      vectorsAdded: Long,
      removedFiles: Long,
      addedFiles: Long) {
    def affectedRows: Long = deletedRows + updatedRows + insertedRows
    def metrics: Map[String, String] = Map(
      "numDeletedRows" -> deletedRows.toString,
      "numUpdatedRows" -> updatedRows.toString,
      "numInsertedRows" -> insertedRows.toString,
      "numDeletionVectorsAdded" -> vectorsAdded.toString,
      "numRemovedFiles" -> removedFiles.toString,
      "numAddedFiles" -> addedFiles.toString
    )
  }

  /**
   * @param deletes the docs to delete, by the path of their split (as its add action names it)
   * @param added   splits already written (updated and inserted rows), committed with them
   * @param updatedRows  how many of the deleted docs are rows written again, updated
   * @param insertedRows how many rows `added` holds that are new, not updated
   */
  def commit(
      log: TransactionLog,
      base: Snapshot,
      tableName: String,
      operation: String,
      parameters: Map[String, String],
      deletes: Map[String, RoaringBitmap],
      added: Seq[AddAction] = Nil,
      updatedRows: Long = 0L,
      insertedRows: Long = 0L): Result = {
    val live = base.allFiles.iterator.map(a => a.path -> a).toMap
    val written = mutable.ArrayBuffer.empty[DeletionVectorDescriptor]
    try {
      // Each changed split: its entry at `base`, and its new entry (None: no row left).
      val changes: Seq[(AddAction, Option[AddAction], Long)] =
        deletes.toSeq.sortBy(_._1).flatMap { case (path, docs) =>
          val entry = live.getOrElse(
            path,
            throw IndexTablesErrors.internalError(
              s"$operation deletes from $path, not in the table"))
          val records = entry.numRecords.getOrElse(
            throw IndexTablesErrors.internalError(s"split $path records no document count"))
          if (!docs.isEmpty && docs.last().toLong >= records) {
            throw IndexTablesErrors.internalError(
              s"$operation deletes doc ${docs.last()} of $path, which holds $records docs")
          }
          val old: Option[RoaringBitmap] =
            entry.deletionVector.map(DeletionVectorFile.read(
              log.tableStore,
              log.tablePath,
              path,
              _))
          val all = old.fold(docs.clone())(o => RoaringBitmap.or(o, docs))
          val fresh = all.getLongCardinality - old.fold(0L)(_.getLongCardinality)
          if (fresh == 0) None
          else if (all.getLongCardinality == records) Some((entry, None, fresh))
          else {
            val d = DeletionVectorFile.write(log.tableStore, log.tablePath, path, all)
            written += d
            Some((entry, Some(entry.copy(deletionVector = Some(d), dataChange = true)), fresh))
          }
        }
      if (changes.isEmpty && added.isEmpty) return Result(None, 0L, 0L, 0L, 0L, 0L, 0L)
      val result = Result(
        None,
        changes.map(_._3).sum - updatedRows,
        updatedRows,
        insertedRows,
        changes.count(_._2.isDefined).toLong,
        changes.size.toLong,
        changes.count(_._2.isDefined).toLong + added.size
      )
      val version = log.startTransaction().commit(
        operation,
        parameters,
        result.metrics) { current =>
        val snap = current.getOrElse(throw IndexTablesErrors.tableNotFound(log.tablePath.toString))
        val now = snap.allFiles.iterator.map(a => a.path -> a.fileKey).toMap
        changes.foreach { case (entry, _, _) =>
          now.get(entry.path) match {
            case Some(k) if k == entry.fileKey =>
            case Some(_) =>
              throw IndexTablesErrors.rowLevelConflict(
                tableName,
                operation,
                entry.path,
                "deleted rows from")
            case None =>
              throw IndexTablesErrors.rowLevelConflict(tableName, operation, entry.path, "removed")
          }
        }
        val protocol =
          if (written.isEmpty || TableFeatures.hasDeletionVectors(snap.protocol)) Nil
          else Seq(TableFeatures.withFeature(snap.protocol, TableFeatures.DeletionVectors))
        val time = System.currentTimeMillis()
        protocol ++ changes.map(_._1.removed(time, dataChange = true)) ++
          changes.flatMap(_._2) ++ added
      }
      result.copy(version = Some(version))
    } catch {
      case NonFatal(e) =>
        written.flatMap(_.file).foreach { f =>
          try log.tableStore.delete(TablePaths.resolve(log.tablePath, f, "deletionVector"))
          catch {
            case NonFatal(d) =>
              logger.warn(s"Could not delete the uncommitted deletion vector $f: ${d.getMessage}")
          }
        }
        throw e
    }
  }

  /**
   * A DELETE decided by the log alone (Spark's metadata-only delete, `SupportsDeleteV2`): every
   * live split whose partition values make `filters` TRUE is removed whole; every other split
   * must be one no row of which can match (by its partition values or statistics). Decided
   * again on the newest version inside the commit, so a split appended since that could hold a
   * matching row fails it with `INDEXTABLES_CONCURRENT_COMMIT` (the row-level DELETE, run again,
   * reads it), as does a change since `base` to the splits it removes (the rows it reports are
   * theirs at `base`). No `filters` removes every split. Driver side.
   */
  def commitWholeSplits(
      log: TransactionLog,
      base: Snapshot,
      tableName: String,
      pruner: SplitPruner,
      filters: Seq[Filter],
      predicate: String): Result = {
    def undecided(snap: Snapshot): String = snap.allFiles
      .find(a => !deletedWhole(pruner, filters, a) && pruner.mayMatch(a, filters))
      .map(_.path).getOrElse("?")
    val removed = wholeSplits(base, pruner, filters).getOrElse(
      throw IndexTablesErrors.rowLevelConflict(tableName, "DELETE", undecided(base), "added"))
    val result = Result(
      None,
      removed.flatMap(_.liveRecords).sum,
      0L,
      0L,
      0L,
      removed.size.toLong,
      0L)
    if (removed.isEmpty) return result
    val version = log.startTransaction().commit(
      "DELETE",
      Map("predicate" -> predicate),
      result.metrics) { current =>
      val snap = current.getOrElse(throw IndexTablesErrors.tableNotFound(log.tablePath.toString))
      // What it removes, and so the rows it reports, must be what it decided on `base`.
      val now = wholeSplits(snap, pruner, filters).getOrElse(
        throw IndexTablesErrors.rowLevelConflict(tableName, "DELETE", undecided(snap), "added"))
      if (now.map(_.fileKey).toSet != removed.map(_.fileKey).toSet) {
        val changed = (now.map(_.fileKey).toSet diff removed.map(_.fileKey).toSet) ++
          (removed.map(_.fileKey).toSet diff now.map(_.fileKey).toSet)
        throw IndexTablesErrors.rowLevelConflict(tableName, "DELETE", changed.head.path, "changed")
      }
      val time = System.currentTimeMillis()
      now.map(_.removed(time, dataChange = true))
    }
    result.copy(version = Some(version))
  }

  /**
   * The live splits of `snap` a DELETE by `filters` removes whole, when the log decides it for
   * every split (each deleted whole, or holding no row that can match); None otherwise.
   */
  def wholeSplits(
      snap: Snapshot,
      pruner: SplitPruner,
      filters: Seq[Filter]): Option[Seq[AddAction]] = {
    val (whole, rest) = snap.allFiles.partition(deletedWhole(pruner, filters, _))
    if (rest.exists(pruner.mayMatch(_, filters))) None else Some(whole)
  }

  private def deletedWhole(
      pruner: SplitPruner,
      filters: Seq[Filter],
      a: AddAction): Boolean =
    filters.isEmpty || pruner.isTrueForPartition(a.partitionValues, filters)
}

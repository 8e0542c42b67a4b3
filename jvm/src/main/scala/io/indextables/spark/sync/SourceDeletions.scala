package io.indextables.spark.sync

import java.io.IOException

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.roaringbitmap.RoaringBitmap

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.storage.LogStore
import io.indextables.spark.transaction.{AddAction, DeletionVectorFile, TablePaths}

/**
 * Makes the deletion vector of a companion split from its source files' deletion vectors (rows
 * a Delta DELETE, UPDATE or MERGE deleted without rewriting their file), so that no read of the
 * index serves a row its source deleted. The split's docs must be its files' rows in order
 * (`companionDocsInRowOrder`): doc d of a split over files f1, f2, ... is row d of f1, then row
 * d - rows(f1) of f2, and so on. The vector is written beside the split, through the index's
 * [[LogStore]], on the driver; the add records the source vectors it reflects
 * (`companionSourceDeletionVectors`), which the next sync compares ([[SyncPlanner]]).
 */
private[sync] final class SourceDeletions(
    source: CompanionSource,
    indexRoot: Path,
    conf: Configuration) {

  private lazy val indexStore = LogStore.forPath(indexRoot, conf)
  private lazy val sourceStore = LogStore.forPath(source.root, conf)
  private val files = Vector.newBuilder[String]

  /** The vector files written so far, relative to the index: deleted if the build fails. */
  def written: Seq[String] = files.result()

  /**
   * `add` (a split over `over`, in its order) with the vector of the rows its files' sources
   * deleted, or with none when they deleted none.
   */
  def apply(add: AddAction, over: Seq[SourceFile]): AddAction = {
    val ids = over.map(_.vectorId)
    if (ids.forall(_.isEmpty)) add.copy(
      deletionVector = None,
      companionSourceDeletionVectors = add.companionSourceDeletionVectors.map(_ => ids))
    else {
      if (!add.companionDocsInRowOrder.contains(true)) throw IndexTablesErrors
        .companionDeletedRowsUnplaceable(
          source.format,
          new Path(source.root, over.find(_.deletionVector.isDefined).get.path).toString)
      val docs = new RoaringBitmap()
      var offset = 0L
      over.zipWithIndex.foreach { case (f, i) =>
        if (f.deletionVector.isDefined) {
          val rows = source.deletedRows(f)
          if (!rows.isEmpty && offset + rows.last() >= Int.MaxValue)
            throw IndexTablesErrors.companionIndexFailed(
              new Path(source.root, f.path).toString,
              new ArithmeticException("its split would hold more than 2^31 - 1 rows"))
          rows.forEach((r: Int) => docs.add((offset + r).toInt))
        }
        if (i < over.size - 1) offset += rowsOf(f)
      }
      val descriptor = DeletionVectorFile.write(indexStore, indexRoot, add.path, docs)
      descriptor.file.foreach(files += _)
      add.copy(deletionVector = Some(descriptor), companionSourceDeletionVectors = Some(ids))
    }
  }

  private def rowsOf(f: SourceFile): Long = {
    val path = TablePaths.resolve(source.root, f.path)
    try ParquetFooters.read(sourceStore, path, f.size).rows
    catch { case e: IOException => throw IndexTablesErrors.companionIndexFailed(path.toString, e) }
  }
}

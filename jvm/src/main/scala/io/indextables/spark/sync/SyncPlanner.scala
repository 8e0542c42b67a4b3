package io.indextables.spark.sync

import io.indextables.spark.transaction.{AddAction, TableLayout}

/** The files of one partition that one task indexes into one split. */
final case class IndexGroup(id: Int, partitionValues: Map[String, String], files: Seq[SourceFile]) {
  def bytes: Long = files.map(_.size).sum
}

/**
 * What one build does to the index.
 *
 * @param kept    live splits whose files are all still in the source, unchanged, or that lie
 *                outside the WHERE clause: they stay
 * @param removed live splits a file of which is gone from the source, or no longer has the size
 *                it was indexed at, or has a new deletion vector while the split's docs are not
 *                in row order: their remaining files are indexed again
 * @param revectored live splits whose files are all there, one of which has another deletion
 *                vector in the source than the split's own vector reflects, and whose docs are
 *                in row order: they stay, with a new vector of their own
 * @param groups  the source files no kept split indexes (new files, and the remaining files of
 *                removed splits), in groups of one partition; a file with a deletion vector is a
 *                group of its own, so that its split's docs are its rows in order
 */
final case class SyncPlan(
    kept: Seq[AddAction],
    removed: Seq[AddAction],
    groups: Seq[IndexGroup],
    revectored: Seq[AddAction] = Nil) {
  def files: Seq[SourceFile] = groups.flatMap(_.files)
}

/** Plans a build from the source's files and the index's live splits. Pure. */
object SyncPlanner {

  /**
   * @param files   the source's files the build may index (those the WHERE clause admits)
   * @param live    the index's live splits
   * @param inScope whether the WHERE clause admits a partition (its values as the log records
   *                them): a split outside it stays whatever happened to its files
   * @param targetInputSize the most bytes of Parquet a group holds, unless one file is bigger
   * @param parallelism the tasks the cluster runs at once: a build of fewer new bytes than
   *                    `parallelism` groups of `targetInputSize` packs them into about that many
   *                    groups instead (at most `parallelism` where partitions allow), so that
   *                    every core indexes a share
   */
  def plan(
      files: Seq[SourceFile],
      live: Seq[AddAction],
      inScope: Map[String, String] => Boolean,
      targetInputSize: Long,
      parallelism: Int = 1): SyncPlan = {
    val present = files.map(f => f.path -> f).toMap
    val (candidates, outside) = live.partition(a => inScope(a.partitionValues))
    val (whole, gone) = candidates.partition { a =>
      val sizes = a.companionSizes
      a.companionSourceFiles.getOrElse(Nil).forall(f =>
        present.get(f).exists(found => sizes.get(f).forall(_ == found.size)))
    }
    val (unchanged, changed) = whole.partition { a =>
      a.companionSourceFiles.getOrElse(Nil).map(present(_).vectorId) == a.companionSourceVectors
    }
    val (revectored, rebuilt) = changed.partition(_.companionDocsInRowOrder.contains(true))
    val kept = unchanged ++ outside
    val indexed = (kept ++ revectored).flatMap(_.companionSourceFiles.getOrElse(Nil)).toSet
    val todo = files.filterNot(f => indexed.contains(f.path))
    // One directory a group: a split's files then have names unique under their directory
    // (see TableLayout.ParquetPathsKey).
    val byPartition = todo.groupBy(f => (f.partitionValues, TableLayout.directoryOf(Seq(f.path))))
      .toSeq.map(_._2.sortBy(_.path))
      .sortBy(_.head.path)
    val target = if (todo.isEmpty) targetInputSize
    else {
      // Greedy packing closes a group only past share - largest file: at most `parallelism`.
      val total = todo.map(_.size).sum
      val share = (total + parallelism - 1) / parallelism + todo.map(_.size).max - 1
      math.min(targetInputSize, math.max(1L, share))
    }
    val packed = byPartition.flatMap(pack(_, target))
    SyncPlan(
      kept,
      gone ++ rebuilt,
      packed.zipWithIndex.map { case (fs, i) => IndexGroup(i, fs.head.partitionValues, fs) },
      revectored)
  }

  /**
   * Consecutive files up to `target` bytes a group; a bigger file, or one with a deletion
   * vector, is a group of its own.
   */
  private def pack(files: Seq[SourceFile], target: Long): Seq[Seq[SourceFile]] =
    files.foldLeft(Vector.empty[Vector[SourceFile]]) { (groups, f) =>
      groups.lastOption match {
        case Some(g)
            if g.map(_.size).sum + f.size <= target && f.deletionVector.isEmpty &&
              g.forall(_.deletionVector.isEmpty) => groups.init :+ (g :+ f)
        case _ => groups :+ Vector(f)
      }
    }
}

package io.indextables.spark.merge

import io.indextables.spark.transaction.{AddAction, MergeSkipAction, Snapshot, TableLayout}

/**
 * One merge: source splits of one partition, with one doc mapping, that become one split.
 *
 * @param id index of the group within its merge, for messages and task names
 */
final case class MergeGroup(
    id: Int,
    partitionValues: Map[String, String],
    sources: Seq[AddAction]) {
  def sourceBytes: Long = sources.iterator.map(_.size).sum
}

/** What one run of MERGE SPLITS (or of merge on write) asks for. */
final case class MergeRequest(
    targetSize: Long,
    maxDestSplits: Option[Int],
    maxSourceSplitsPerMerge: Int)

object MergeRequest {

  /** Upstream's default target size of a merged split. */
  val DefaultTargetSize: Long = 5L << 30

  /** A split already this fraction of the target size or more is left as it is. */
  val SkipFraction: Double = 0.45
}

/**
 * Decides which splits merge into which, on the driver, from a snapshot. Pure: the same
 * snapshot and request give the same groups.
 *
 * Splits are grouped by partition and by doc mapping (splits written with different mappings,
 * before and after a schema change, are never merged together). Within a group, splits smaller
 * than [[MergeRequest.SkipFraction]] of the target are taken in log order (oldest first) and
 * packed greedily: a merge group closes when the next split would take it past the target, or
 * when it holds `maxSourceSplitsPerMerge` splits. A group of one split is no merge and is
 * dropped. `maxDestSplits` keeps the first (oldest) groups only. A split with a mergeskip whose
 * `retryAfter` has not passed is left out, and so is a split with a deletion vector: the
 * native merge would copy the rows the vector deletes into the merged split.
 */
object MergePlanner {

  def plan(
      snapshot: Snapshot,
      request: MergeRequest,
      includePartition: Map[String, String] => Boolean,
      now: Long): Seq[MergeGroup] = {
    val skipped = activeSkips(snapshot.mergeSkips, now)
    val threshold = (request.targetSize * MergeRequest.SkipFraction).toLong
    val candidates = snapshot.allFiles.filter { f =>
      f.size < threshold && f.deletionVector.isEmpty && !skipped.contains(f.path) &&
      includePartition(f.partitionValues)
    }
    val byKey = candidates.groupBy(f => (f.partitionValues, snapshot.docMappingFor(f)))
    // Keys in the order of their oldest split, so that MAX DEST SPLITS takes the oldest.
    val order = candidates.map(f => (f.partitionValues, snapshot.docMappingFor(f))).distinct
    val packed = order.flatMap { key =>
      pack(byKey(key).sortBy(_.modificationTime), request).map(g => (key._1, g))
    }
    val limited = request.maxDestSplits.map(n => packed.take(n)).getOrElse(packed)
    limited.zipWithIndex.map { case ((partition, sources), i) => MergeGroup(i, partition, sources) }
  }

  /**
   * The splits with deleted rows that a merge must rewrite first (see
   * `sql.commands.MergeSplitsCommand`): those it would merge (smaller than
   * [[MergeRequest.SkipFraction]] of the target), and larger ones whose deletion vector covers
   * more than `deletedRowsThreshold` of their docs; in the partitions `includePartition`
   * accepts, without an active mergeskip. None for a companion index of another table's files,
   * which cannot write rows: its splits with deleted rows stay unmerged until a sync replaces
   * them.
   */
  def vectorRewrites(
      snapshot: Snapshot,
      request: MergeRequest,
      includePartition: Map[String, String] => Boolean,
      deletedRowsThreshold: Double,
      now: Long): Seq[AddAction] = {
    val skipped = activeSkips(snapshot.mergeSkips, now)
    val threshold = (request.targetSize * MergeRequest.SkipFraction).toLong
    val external = snapshot.metadata.configuration.contains(TableLayout.SourceTablePathKey)
    if (external) Nil
    else snapshot.allFiles.filter { f =>
      f.deletionVector.exists { d =>
        val deleted = d.cardinality.toDouble / f.numRecords.getOrElse(Long.MaxValue).max(1L)
        (f.size < threshold || deleted > deletedRowsThreshold) && !skipped.contains(f.path) &&
        includePartition(f.partitionValues)
      }
    }
  }

  /** The paths a mergeskip still excludes at `now`. */
  def activeSkips(skips: Seq[MergeSkipAction], now: Long): Set[String] =
    skips.filter(s => s.retryAfter.forall(_ > now)).map(_.path).toSet

  private def pack(files: Seq[AddAction], request: MergeRequest): Seq[Seq[AddAction]] = {
    val groups = Seq.newBuilder[Seq[AddAction]]
    var current = Vector.empty[AddAction]
    var bytes = 0L
    files.foreach { f =>
      val full = current.size >= request.maxSourceSplitsPerMerge ||
        (current.nonEmpty && bytes + f.size > request.targetSize)
      if (full) {
        groups += current
        current = Vector.empty
        bytes = 0L
      }
      current :+= f
      bytes += f.size
    }
    groups += current
    groups.result().filter(_.size >= 2)
  }
}

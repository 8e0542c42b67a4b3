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

/**
 * What one run of MERGE SPLITS (or of merge on write) asks for.
 *
 * @param mergeFactor None for MERGE SPLITS: every small split is packed toward the target.
 *   Some(f) for merge on write: size tiers ([[MergePlanner]]), where a merge takes at least f
 *   splits of one tier below the top one ([[minSources]]), so that a row is rewritten about once
 *   per tier, not once per merge.
 */
final case class MergeRequest(
    targetSize: Long,
    maxDestSplits: Option[Int],
    maxSourceSplitsPerMerge: Int,
    mergeFactor: Option[Int] = None) {

  /**
   * The size tier of a split of `bytes`: for merge on write, 0 below targetSize ÷ f³, 1 below
   * ÷ f², 2 below ÷ f, 3 from there (up to the skip fraction), so that f splits of a tier merge
   * into about one split of the next; for MERGE SPLITS, 0 for every split.
   */
  def tier(bytes: Long): Int = mergeFactor match {
    case None => 0
    case Some(f) =>
      var t = 0
      var bound = math.max(1L, (targetSize / math.pow(f.toDouble, MergeRequest.Tiers - 1)).toLong)
      while (bytes >= bound && t < MergeRequest.Tiers - 1) {
        t += 1
        bound = if (bound > Long.MaxValue / f) Long.MaxValue else bound * f
      }
      t
  }

  /**
   * The fewest splits of tier `t` one merge takes: f below merge on write's top tier; two (any
   * merge) in the top tier, whose splits are targetSize ÷ f or more, so that f of them rarely fit
   * in the target, and for MERGE SPLITS.
   */
  def minSources(t: Int): Int = mergeFactor match {
    case Some(f) if t < MergeRequest.Tiers - 1 => f
    case _ => 2
  }
}

object MergeRequest {

  /** Upstream's default target size of a merged split. */
  val DefaultTargetSize: Long = 5L << 30

  /** A split already this fraction of the target size or more is left as it is. */
  val SkipFraction: Double = 0.45

  /** Merge on write's size tiers: below target ÷ f³, then up to ÷ f², ÷ f, and the rest. */
  val Tiers: Int = 4
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
 *
 * Merge on write (`mergeFactor` f) packs each size tier ([[MergeRequest.tier]]) apart and keeps
 * the groups of [[MergeRequest.minSources]] splits or more (f below the top tier), as Lucene's
 * and Quickwit's log merge policies do: a stream's small splits merge f at a time into splits
 * of the next tier, those f at a time into the next, and so on; the top tier (targetSize / f up
 * to the target's [[MergeRequest.SkipFraction]]) packs toward the target as MERGE SPLITS does.
 * Above the lowest tier a row is rewritten about once per tier (packing every split toward the
 * target rewrote the one growing split at every merge); the lowest tier's merged splits, while
 * still below targetSize / f³, merge again with the next f - 1.
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
      val files = byKey(key).sortBy(_.modificationTime)
      val groups = files.groupBy(file => request.tier(file.size)).toSeq.sortBy(_._1).flatMap {
        case (t, tier) => pack(tier, request).filter(_.size >= request.minSources(t))
      }
      groups.map(g => (key._1, g))
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

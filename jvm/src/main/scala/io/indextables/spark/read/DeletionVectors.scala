package io.indextables.spark.read

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.roaringbitmap.RoaringBitmap

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.storage.LogStore
import io.indextables.spark.transaction.{DeletionVectorDescriptor, DeletionVectorFile}
import io.indextables.spark.util.BoundedCache

/**
 * The deleted documents of a split with a deletion vector, as every read route leaves them out:
 * loaded once per JVM per vector (a vector file never changes under its name) and applied to
 * the (segment, doc) numbers a search returns. A vector names docs of the split's one segment;
 * a hit in another segment of a split with a vector fails the read rather than be guessed at.
 * Thread-safe; runs on executors and, for driver-answered aggregates, on the driver.
 */
object DeletionVectors {

  // Decoded vectors by table and vector id; immutable, and small next to the splits they cover.
  private val loaded = new BoundedCache[String, RoaringBitmap](10000)

  /** The deleted docs of `split`, or None when it has no vector. */
  def of(plan: ReadPlan, split: SplitInputPartition): Option[RoaringBitmap] =
    split.deletionVector.map(load(plan.tablePath, plan.hadoopConf.value, split.path, _))

  /** The deleted docs the vector `d` of the split at `splitPath` of the table names. */
  def load(
      tablePath: String,
      conf: Configuration,
      splitPath: String,
      d: DeletionVectorDescriptor): RoaringBitmap =
    loaded.getOrElseUpdate(s"$tablePath|${d.uniqueId}") {
      val root = LogStore.qualify(new Path(tablePath), conf)
      DeletionVectorFile.read(LogStore.forPath(root, conf), root, splitPath, d)
    }

  /**
   * The hits `(segments, docs)` of `split` less its deleted docs, in the same order, at most
   * `limit` of them.
   */
  def surviving(
      split: SplitInputPartition,
      deleted: RoaringBitmap,
      segments: Array[Int],
      docs: Array[Int],
      limit: Int): (Array[Int], Array[Int]) = {
    val keep = Array.newBuilder[Int]
    var i = 0
    var n = 0
    while (i < docs.length && n < limit) {
      if (segments(i) != 0) throw IndexTablesErrors.splitNotSingleSegment(split.path)
      if (!deleted.contains(docs(i))) { keep += i; n += 1 }
      i += 1
    }
    val at = keep.result()
    (new Array[Int](at.length), at.map(docs))
  }

  /** Docs 0 until `docs` of segment 0 less the deleted ones, at most `limit` of them. */
  def survivingOf(docs: Long, deleted: RoaringBitmap, limit: Int): Array[Int] = {
    val all = new RoaringBitmap()
    all.add(0L, docs)
    all.andNot(deleted)
    val it = all.getIntIterator
    val out = Array.newBuilder[Int]
    var n = 0
    while (it.hasNext && n < limit) { out += it.next(); n += 1 }
    out.result()
  }
}

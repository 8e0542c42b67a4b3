package io.indextables.spark.write

import java.io.File
import java.util.UUID

import scala.jdk.CollectionConverters._

import org.apache.commons.io.FileUtils

import io.indextables.tantivy4java.core.Index
import io.indextables.tantivy4java.split.merge.QuickwitSplit

/**
 * The segments of a split file: how many it holds, and the merge of them into one. Every
 * producer of splits leaves one segment (`SegmentLayoutSuite`): its queries then run each
 * automaton once, a full read needs no search, and a deletion vector numbers the docs of that
 * segment. Stateless; runs where the split is made (an executor).
 */
object SplitSegments {
  private val SegmentFile = "^([0-9a-f]{32})\\.".r

  /** The number of segments of the split at `path`, from the file list in its footer. */
  def count(path: String): Int =
    QuickwitSplit.listSplitFiles(path).asScala
      .flatMap(f => SegmentFile.findFirstMatchIn(f).map(_.group(1)))
      .toSet
      .size

  /**
   * A split whose segments were merged into one: the new file, its metadata, and whether its
   * docs took the order `order` gave (see [[mergeIntoOne]]).
   */
  final case class Merged(path: String, metadata: QuickwitSplit.SplitMetadata, ordered: Boolean)

  /**
   * The split at `path` with its segments merged into one, as a new file under `workDir` (the
   * old one deleted), and its metadata; None when it held one segment already. The split is
   * unpacked into an index directory, its segments merged there (see
   * [[DocumentSplitWriter.mergeToOneSegment]]: in the order `order` gives, when it gives one,
   * else in segment order) and packed again with every file of the directory, a companion
   * split's Parquet manifest too.
   */
  def mergeIntoOne(
      path: String,
      workDir: File,
      heapSize: Long,
      order: Index => Option[Seq[String]] = _ => None): Option[Merged] =
    if (count(path) <= 1) None
    else {
      val dir = new File(workDir, s"unpacked-${UUID.randomUUID()}")
      val out = new File(workDir, s"merged-${UUID.randomUUID()}.split")
      try {
        QuickwitSplit.extractSplit(path, dir.getAbsolutePath)
        val index = Index.open(dir.getAbsolutePath)
        var ordered = false
        try
          DocumentSplitWriter.mergeToOneSegment(
            index,
            heapSize,
            i => { val o = order(i); ordered = o.isDefined; o })
        finally index.close()
        val config = new QuickwitSplit.SplitConfig("indextables", "spark", "node")
        val md =
          QuickwitSplit.convertIndexFromPath(dir.getAbsolutePath, out.getAbsolutePath, config)
        new File(path).delete()
        Some(Merged(out.getAbsolutePath, md, ordered))
      } finally FileUtils.deleteQuietly(dir)
    }
}

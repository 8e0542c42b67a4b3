package io.indextables.spark.read

import scala.collection.JavaConverters._

import org.apache.hadoop.fs.{LocalFileSystem, Path, RawLocalFileSystem}

import io.indextables.spark.IndexTablesErrors
import io.indextables.tantivy4java.split.merge.QuickwitSplit
import io.indextables.tantivy4java.split.{SplitCacheManager, SplitSearcher}

/**
 * Opens tantivy4java split searchers. The cache manager is process-wide (tantivy4java keeps one
 * per configuration); each searcher belongs to one reading task, which closes it. A searcher is
 * built from the footer offsets recorded in the log, as tantivy4java requires.
 */
object SplitSearchEngine {
  val CacheName = "indextables"

  def cacheManager(maxSize: Long): SplitCacheManager =
    SplitCacheManager.getInstance(
      new SplitCacheManager.CacheConfig(CacheName).withMaxCacheSize(maxSize))

  /** The split's location as tantivy4java takes it, after checking that the file exists. */
  def location(plan: ReadPlan, split: SplitInputPartition): String = {
    val root = new Path(plan.tablePath)
    val p = new Path(root, split.path)
    val fs = p.getFileSystem(plan.hadoopConf.value)
    SplitFileCheck.verify(fs, p, split.size, split.footerStartOffset, split.footerEndOffset)
    fs match {
      case _: LocalFileSystem | _: RawLocalFileSystem => fs.makeQualified(p).toUri.getPath
      case _ => fs.makeQualified(p).toString
    }
  }

  def open(plan: ReadPlan, split: SplitInputPartition): SplitSearcher =
    openAt(location(plan, split), split, plan)

  /** A searcher on the split at `where` (from [[location]]). */
  def openAt(where: String, split: SplitInputPartition, plan: ReadPlan): SplitSearcher = {
    val numDocs = split.numRecords.getOrElse(0L)
    val metadata = new QuickwitSplit.SplitMetadata(
      splitIdOf(split.path),
      "indextables",
      0L,
      "spark",
      "node",
      numDocs,
      0L,
      null,
      null,
      0L,
      "Mature",
      java.util.Collections.emptySet[String](),
      split.footerStartOffset,
      split.footerEndOffset,
      0L,
      0,
      "default",
      split.docMappingJson.orNull,
      java.util.Collections.emptyList[QuickwitSplit.SkippedSplit]()
    )
    try cacheManager(plan.cacheMaxSize).createSplitSearcher(where, metadata)
    catch { case e: Exception => throw IndexTablesErrors.splitReadFailed(where, e) }
  }

  /**
   * For a split at a local path (from [[location]]) that holds exactly one segment, no deleted
   * documents and the record count the log gives it: that count. Its documents are then
   * numbers 0 until n of segment 0 (tantivy numbers a segment's documents densely), so a read
   * of every document needs no search. None whenever any of that is not certain.
   */
  def singleSegmentDocs(where: String, split: SplitInputPartition): Option[Long] =
    if (where.contains("://") || split.numRecords.isEmpty) None
    else
      try {
        val files = QuickwitSplit.listSplitFiles(where).asScala
        val segments = files.flatMap(f => SegmentFile.findFirstMatchIn(f).map(_.group(1))).toSet
        val deletes = files.exists(_.endsWith(".del"))
        lazy val docs = QuickwitSplit.readSplitMetadata(where).getNumDocs
        if (segments.size == 1 && !deletes && split.numRecords.contains(docs)) split.numRecords
        else None
      } catch { case _: Exception => None }

  private val SegmentFile = "^([0-9a-f]{32})\\.".r

  private def splitIdOf(path: String): String = {
    val name = path.substring(path.lastIndexOf('/') + 1)
    name.stripSuffix(".split").stripPrefix("part-")
  }
}

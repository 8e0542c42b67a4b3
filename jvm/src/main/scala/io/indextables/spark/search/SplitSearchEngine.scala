package io.indextables.spark.search

import org.apache.hadoop.fs.{LocalFileSystem, Path, RawLocalFileSystem}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.read.{ReadPlan, SplitInputPartition}
import io.indextables.tantivy4java.split.{SplitCacheManager, SplitSearcher}
import io.indextables.tantivy4java.split.merge.QuickwitSplit

/**
 * Opens tantivy4java split searchers. The cache manager is process-wide (tantivy4java keeps one
 * per configuration); each searcher belongs to one reading task, which closes it. A searcher is
 * built from the footer offsets recorded in the log, as tantivy4java requires.
 */
object SplitSearchEngine {
  val CacheName = "indextables"

  def cacheManager(maxSize: Long): SplitCacheManager =
    SplitCacheManager.getInstance(new SplitCacheManager.CacheConfig(CacheName).withMaxCacheSize(maxSize))

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

  def open(plan: ReadPlan, split: SplitInputPartition): SplitSearcher = {
    val where = location(plan, split)
    val numDocs = split.numRecords.getOrElse(0L)
    val metadata = new QuickwitSplit.SplitMetadata(
      splitIdOf(split.path), "indextables", 0L, "spark", "node", numDocs, 0L, null, null, 0L,
      "Mature", java.util.Collections.emptySet[String](), split.footerStartOffset,
      split.footerEndOffset, 0L, 0, "default", split.docMappingJson.orNull,
      java.util.Collections.emptyList[QuickwitSplit.SkippedSplit]())
    try cacheManager(plan.cacheMaxSize).createSplitSearcher(where, metadata)
    catch { case e: Exception => throw IndexTablesErrors.splitReadFailed(where, e) }
  }

  private def splitIdOf(path: String): String = {
    val name = path.substring(path.lastIndexOf('/') + 1)
    name.stripSuffix(".split").stripPrefix("part-")
  }
}

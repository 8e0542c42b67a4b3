package io.indextables.spark.write

import java.io.File

import scala.collection.JavaConverters._

import org.apache.spark.sql.functions.{col, concat, lit}

import io.indextables.spark.IndexTablesTestBase
import io.indextables.tantivy4java.split.merge.QuickwitSplit

/**
 * Every split the product writes holds one segment and nothing stray: its queries then run
 * each automaton once, and a full read needs no search. The indexing heap is set to tantivy's
 * minimum, so the writer flushes several segments per split and the merge must happen.
 */
class SplitSegmentsSuite extends IndexTablesTestBase {

  private val SegmentFile = "^([0-9a-f]{32})\\.(.+)$".r

  /** The segment ids a split's files belong to, and the files that belong to none. */
  private def segmentsOf(split: File): (Set[String], Seq[String]) = {
    val files = QuickwitSplit.listSplitFiles(split.getAbsolutePath).asScala.toSeq
    val segments = files.collect { case SegmentFile(id, _) => id }.toSet
    val other = files.filter(f => SegmentFile.findFirstMatchIn(f).isEmpty)
    (segments, other)
  }

  private def splitsUnder(path: String): Seq[File] =
    new File(path).listFiles().toSeq.filter(_.getName.endsWith(".split"))

  private val rows = 120000

  private def data =
    spark.range(rows).select(
      col("id"),
      concat(lit("request "), col("id"), lit(" served block blk_"), col("id") * 7919)
        .as("message"))

  Seq("text" -> "batch documents", "string" -> "Arrow FFI").foreach { case (kind, route) =>
    test(s"a $kind message column ($route): every split has one segment and no stray file") {
      val path = tablePath(s"segments-$kind")
      data.coalesce(1).write.format("indextables")
        .option("spark.indextables.indexing.typemap.message", kind)
        .option("spark.indextables.indexWriter.heapSize", "15000000")
        .mode("overwrite")
        .save(path)
      val splits = splitsUnder(path)
      assert(splits.nonEmpty)
      splits.foreach { s =>
        val (segments, other) = segmentsOf(s)
        assert(segments.size === 1, s"${s.getName}: segments $segments")
        assert(
          other.toSet.subsetOf(Set("meta.json", ".managed.json", "split_fields", "hotcache")),
          s"${s.getName}: files outside the segment: $other")
      }
      val read = spark.read.format("indextables").load(path)
      assert(read.count() === rows)
      assert(read.filter(col("id") === 4242L).select("message").head().getString(0) ===
        s"request 4242 served block blk_${4242L * 7919}")
    }
  }
}

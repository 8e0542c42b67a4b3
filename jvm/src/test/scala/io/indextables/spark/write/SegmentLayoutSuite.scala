package io.indextables.spark.write

import java.io.File

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.{DataFrame, SparkSession}
import org.apache.spark.sql.functions.{col, concat, lit}

import io.indextables.spark.IndexTablesTestBase
import io.indextables.spark.config.IndexTablesOptions
import io.indextables.spark.extensions.ExtensionsSession
import io.indextables.spark.transaction.TransactionLog
import io.indextables.tantivy4java.split.merge.QuickwitSplit

/**
 * Every producer of splits leaves exactly one segment per split: the Arrow FFI writer, the
 * batch-document writer, a companion write, BUILD INDEXTABLES COMPANION and MERGE SPLITS of
 * either layout. A deletion vector numbers the docs of segment 0, so a split of several
 * segments could not take one. The writer heap is tantivy's least (15 MB) and the rows are
 * more than it holds, so each native writer flushes several segments (three to six, counted
 * with the merge step taken out) that the producer must merge.
 */
class SegmentLayoutSuite extends IndexTablesTestBase {

  override protected lazy val spark: SparkSession = ExtensionsSession.create("segments")

  private val Heap = "15000000"
  private val rows = 60000

  /** Rows whose `message` holds two unique tokens each, to fill an indexing heap quickly. */
  private def data(n: Int = rows): DataFrame =
    spark.range(n).select(
      col("id"),
      concat(lit("request "), col("id"), lit(" served block blk_"), col("id") * 7919)
        .as("message"))

  private def write(df: DataFrame, path: String, layout: String, message: String): Unit =
    df.coalesce(1).write.format("indextables")
      .option("spark.indextables.write.layout", layout)
      .option("spark.indextables.indexing.typemap.message", message)
      .option("spark.indextables.indexWriter.heapSize", Heap)
      .mode("append")
      .save(path)

  /** The live splits of the table at `path`, as local files. */
  private def liveSplits(path: String): Seq[File] = {
    val snap = TransactionLog.forTable(
      path,
      spark.sessionState.newHadoopConf(),
      IndexTablesOptions.Defaults.logSettings).snapshot()
    snap.allFiles.map(a => new File(new File(path), a.path))
  }

  private val IndexFiles = Set("meta.json", ".managed.json", "split_fields", "hotcache")

  /** Asserts that every live split of `path` has one segment and no file outside it. */
  private def assertOneSegment(path: String, extraFiles: Set[String] = Set.empty): Unit = {
    val splits = liveSplits(path)
    assert(splits.nonEmpty)
    splits.foreach { s =>
      val files = QuickwitSplit.listSplitFiles(s.getPath).asScala.toSeq
      assert(SplitSegments.count(s.getPath) === 1, s"${s.getName}: ${files.sorted}")
      val other = files.filterNot(_.matches("^[0-9a-f]{32}\\..+$"))
      assert(other.toSet.subsetOf(IndexFiles ++ extraFiles), s"${s.getName}: stray $other")
    }
  }

  private def assertReadsBack(path: String, n: Long, id: Long): Unit = {
    val read = spark.read.format("indextables").load(path)
    assert(read.count() === n)
    assert(read.filter(col("id") === id).select("message").head().getString(0) ===
      s"request $id served block blk_${id * 7919}")
  }

  Seq("text" -> "batch documents", "string" -> "Arrow FFI").foreach { case (kind, route) =>
    test(s"a $kind message column ($route): every split has one segment and no stray file") {
      val path = tablePath(s"segments-$kind")
      write(data(), path, "splits", kind)
      assertOneSegment(path)
      assertReadsBack(path, rows, 4242L)
    }
  }

  test("a companion write of more rows than the writer heap holds: one segment per split") {
    val path = tablePath("segments-companion")
    write(data(), path, "companion", "text")
    assertOneSegment(path, Set("_parquet_manifest.json"))
    assertReadsBack(path, rows, 4242L)
  }

  test("BUILD INDEXTABLES COMPANION over several files: one segment per split") {
    val source = tablePath("segments-source")
    data().repartition(4).write.parquet(source)
    val index = tablePath("segments-built")
    spark.sql(
      s"BUILD INDEXTABLES COMPANION FOR PARQUET '$source' AT LOCATION '$index' " +
        "INDEXING MODES (message: 'text') WRITER HEAP SIZE 15M").collect()
    assert(liveSplits(index).size === 2) // two files per split: one group per core
    assertOneSegment(index, Set("_parquet_manifest.json"))
    assertReadsBack(index, rows, 4242L)
  }

  Seq("splits", "companion").foreach { layout =>
    test(s"MERGE SPLITS of $layout splits: the merged split has one segment") {
      val path = tablePath(s"segments-merge-$layout")
      (0 until 3).foreach(i => write(data().filter(col("id") % 3 === i), path, layout, "text"))
      assert(liveSplits(path).size === 3)
      spark.conf.set("spark.indextables.merge.heapSize", Heap)
      try spark.sql(s"MERGE SPLITS '$path'").collect()
      finally spark.conf.unset("spark.indextables.merge.heapSize")
      assert(liveSplits(path).size === 1)
      assertOneSegment(path, if (layout == "companion") Set("_parquet_manifest.json") else Set())
      assertReadsBack(path, rows, 4242L)
    }
  }
}

package io.indextables.spark.read

import java.time.LocalDateTime

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.schema.{IndexKind, IndexedField}
import io.indextables.tantivy4java.batch.{BatchDocument, BatchDocumentBuilder, BatchDocumentReader}

class NativeDocsSuite extends AnyFunSuite {

  test("the pinned tantivy4java has the projected batch entry point reads go through") {
    assert(NativeDocs.hasProjectedEntryPoint)
  }

  test("the batch decoder gives the rows tantivy4java's own map parser and DocumentValues give") {
    val fields = Seq(
      IndexedField("s", StringType, IndexKind.RawString),
      IndexedField("l", LongType, IndexKind.I64),
      IndexedField("i", IntegerType, IndexKind.I64),
      IndexedField("d", DoubleType, IndexKind.F64),
      IndexedField("f", FloatType, IndexKind.F64),
      IndexedField("b", BooleanType, IndexKind.Bool),
      IndexedField("ts", TimestampType, IndexKind.DateTime),
      IndexedField("dt", DateType, IndexKind.DateTime),
      IndexedField("dec", DecimalType(10, 2), IndexKind.F64),
      IndexedField("bin", BinaryType, IndexKind.Bytes),
      IndexedField("j", StringType, IndexKind.Json),
      IndexedField("st", StructType(Seq(StructField("a", LongType))), IndexKind.Json)
    )
    val builder = new BatchDocumentBuilder()
    (0 until 20).foreach { k =>
      val doc = new BatchDocument()
      if (k % 5 != 1) {
        doc.addText("s", s"välue $k")
        if (k % 3 == 0) doc.addText("s", "second value is ignored")
        doc.addText("unwanted", "x" * k)
        doc.addInteger("l", -k * 1000000007L)
        doc.addInteger("i", k)
        doc.addFloat("d", k * 1.5)
        doc.addFloat("f", k * 0.25)
        doc.addBoolean("b", k % 2 == 0)
        doc.addDate("ts", LocalDateTime.of(1969, 12, 31, 23, 59, 59, k * 1000))
        doc.addDate("dt", LocalDateTime.of(2024, 1, 1 + k, 0, 0))
        doc.addFloat("dec", k + 0.25)
        doc.addBytes("bin", Array[Byte](k.toByte, 1))
        doc.addJson("j", s"""{"k":$k}""")
        doc.addJson("st", Map[String, Object]("a" -> Long.box(k.toLong)).asJava)
      }
      builder.addDocument(doc)
    }
    val bytes = builder.buildArray()
    val ordinals = fields.indices.reverse // fill the row back to front: ordinals are honoured
    val rows = new ProjectedDocDecoder(fields.zip(ordinals)).decode(
      bytes,
      () => new GenericInternalRow(fields.size))
    val maps = new BatchDocumentReader().parseToMaps(java.nio.ByteBuffer.wrap(bytes)).asScala
    assert(rows.length === 20 && maps.size === 20)
    rows.zip(maps).foreach { case (row, m) =>
      fields.zip(ordinals).foreach { case (f, o) =>
        val raw = m.get(f.name) match {
          case l: java.util.List[_] => l.get(0)
          case v => v
        }
        val expected = DocumentValues.toCatalyst(raw, f.dataType)
        val actual = row.get(o, f.dataType)
        (expected, actual) match {
          case (e: Array[Byte], a: Array[Byte]) => assert(e.toSeq === a.toSeq, f.name)
          case (e, a) => assert(e === a, f.name)
        }
      }
    }
    assert(rows(1).isNullAt(ordinals.head) && !rows(0).isNullAt(ordinals.head))
  }

  test("a buffer without the batch format's magic is refused with a clear error") {
    val decoder =
      new ProjectedDocDecoder(Seq((IndexedField("s", StringType, IndexKind.RawString), 0)))
    val e = intercept[IndexTablesException](decoder.decode(
      new Array[Byte](32),
      () => new GenericInternalRow(1)))
    assert(e.getMessage.contains("TANT"))
    assert(e.getErrorClass === "INDEXTABLES_NATIVE_DATA_UNEXPECTED")
  }
}

class SingleSegmentDocsSuite extends AnyFunSuite {
  import java.io.File
  import io.indextables.spark.read.SplitInputPartition
  import io.indextables.tantivy4java.core.{Index, SchemaBuilder}
  import io.indextables.tantivy4java.split.merge.QuickwitSplit

  /** A split of `commits` segments (one per commit) of `perCommit` documents each. */
  private def split(dir: File, commits: Int, perCommit: Int): (String, Long) = {
    val sb = new SchemaBuilder()
    val schema =
      try { sb.addIntegerField("n", true, true, true); sb.build() }
      finally sb.close()
    val indexDir = new File(dir, s"index-$commits")
    val index = new Index(schema, indexDir.getAbsolutePath, false)
    try {
      val writer = index.writer(50000000, 1)
      try for (c <- 0 until commits) {
          val batch = new BatchDocumentBuilder()
          (0 until perCommit).foreach { i =>
            val d = new BatchDocument(); d.addInteger("n", c * perCommit + i); batch.addDocument(d)
          }
          writer.addDocumentsBatch(batch)
          writer.commit()
        }
      finally writer.close()
    } finally { index.close(); schema.close() }
    val out = new File(dir, s"$commits.split")
    val md = QuickwitSplit.convertIndexFromPath(
      indexDir.getAbsolutePath,
      out.getAbsolutePath,
      new QuickwitSplit.SplitConfig("i", "s", "n"))
    (out.getAbsolutePath, md.getNumDocs)
  }

  private def partition(path: String, n: Option[Long]) =
    SplitInputPartition(path, Map.empty, n, None, 0L, 0L, None, hasLongTokens = false)

  // A checked split at `where`; each test split has an identity of its own.
  private def at(where: String) = SplitSearchEngine.CheckedSplit(where, s"$where|test")

  test("only a local one-segment split with the log's record count is read without a search") {
    val dir = java.nio.file.Files.createTempDirectory("segments").toFile
    try {
      val (one, n1) = split(dir, 1, 30)
      val (two, n2) = split(dir, 2, 30)
      assert(n1 === 30 && n2 === 60)
      assert(SplitSearchEngine.singleSegmentDocs(at(one), partition(one, Some(30L))) === Some(30L))
      assert(SplitSearchEngine.singleSegmentDocs(at(two), partition(two, Some(60L))) === None)
      assert(SplitSearchEngine.singleSegmentDocs(at(one), partition(one, Some(29L))) === None)
      assert(SplitSearchEngine.singleSegmentDocs(at(one), partition(one, None)) === None)
      assert(SplitSearchEngine.singleSegmentDocs(
        at("s3://bucket/x.split"),
        partition(one, Some(30L))) === None)
      assert(SplitSearchEngine.singleSegmentDocs(
        at(new File(dir, "missing.split").getPath),
        partition(one, Some(30L))) === None)
    } finally org.apache.commons.io.FileUtils.deleteQuietly(dir)
  }
}

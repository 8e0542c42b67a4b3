package io.indextables.spark.read

import java.io.{File, RandomAccessFile}
import java.nio.file.{Files, StandardCopyOption}

import org.apache.commons.io.FileUtils
import org.apache.hadoop.fs.Path
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.storage.LocalLogStore
import io.indextables.tantivy4java.batch.{BatchDocument, BatchDocumentBuilder}
import io.indextables.tantivy4java.core.{Index, SchemaBuilder}
import io.indextables.tantivy4java.split.merge.QuickwitSplit

class SplitFileCheckSuite extends AnyFunSuite with BeforeAndAfterAll {

  private lazy val dir = Files.createTempDirectory("split-check").toFile
  private val fs = LocalLogStore
  private var splitFile: File = _
  private var footerStart: Long = _
  private var footerEnd: Long = _

  override def beforeAll(): Unit = {
    super.beforeAll()
    val indexDir = new File(dir, "index")
    val sb = new SchemaBuilder()
    val schema =
      try {
        sb.addStringField("name", true, true, true).addIntegerField("n", true, true, true)
        sb.build()
      } finally sb.close()
    try {
      val index = new Index(schema, indexDir.getAbsolutePath, false)
      try {
        val writer = index.writer(50000000, 1)
        try {
          val batch = new BatchDocumentBuilder()
          (1 to 20).foreach { i =>
            val doc = new BatchDocument()
            doc.addText("name", s"row-$i")
            doc.addInteger("n", i.toLong)
            batch.addDocument(doc)
          }
          writer.addDocumentsBatch(batch)
          writer.commit()
        } finally writer.close()
      } finally index.close()
    } finally schema.close()
    splitFile = new File(dir, "good.split")
    val md = QuickwitSplit.convertIndexFromPath(
      indexDir.getAbsolutePath,
      splitFile.getAbsolutePath,
      new QuickwitSplit.SplitConfig("idx", "src", "node"))
    assert(md.hasFooterOffsets)
    footerStart = md.getFooterStartOffset
    footerEnd = md.getFooterEndOffset
  }

  override def afterAll(): Unit =
    try FileUtils.deleteQuietly(dir)
    finally super.afterAll()

  private def path(f: File) = new Path(f.toURI)

  private def copy(name: String): File = {
    val f = new File(dir, name)
    Files.copy(splitFile.toPath, f.toPath, StandardCopyOption.REPLACE_EXISTING)
    f
  }

  private def rejects(f: File, size: Option[Long], start: Long, end: Long): String = {
    val e = intercept[IndexTablesException](SplitFileCheck.verify(fs, path(f), size, start, end))
    assert(e.getMessage.contains(path(f).toString), e.getMessage)
    e.getMessage
  }

  test("a split written by tantivy4java passes, with or without an expected size") {
    assert(footerEnd === splitFile.length && footerStart > 0 && footerStart < footerEnd)
    SplitFileCheck.verify(fs, path(splitFile), Some(splitFile.length), footerStart, footerEnd)
    SplitFileCheck.verify(fs, path(splitFile), None, footerStart, footerEnd)
  }

  test("a missing file is rejected, naming the file") {
    val msg = rejects(new File(dir, "missing.split"), Some(100L), footerStart, footerEnd)
    assert(msg.contains("does not exist"), msg)
  }

  test("a file whose size differs from the log's is rejected") {
    val msg = rejects(splitFile, Some(splitFile.length + 1), footerStart, footerEnd)
    assert(msg.contains(s"${splitFile.length} bytes"), msg)
  }

  test("garbage bytes of the same size are rejected") {
    val f = new File(dir, "garbage.split")
    val rnd = new scala.util.Random(7)
    val bytes = new Array[Byte](splitFile.length.toInt)
    rnd.nextBytes(bytes)
    Files.write(f.toPath, bytes)
    rejects(f, Some(bytes.length.toLong), footerStart, footerEnd)
    java.util.Arrays.fill(bytes, 0.toByte)
    Files.write(f.toPath, bytes)
    rejects(f, Some(bytes.length.toLong), footerStart, footerEnd)
  }

  test("a truncated file is rejected, whether or not the log records a size") {
    val f = copy("truncated.split")
    val raf = new RandomAccessFile(f, "rw")
    try raf.setLength(footerEnd - 10)
    finally raf.close()
    rejects(f, Some(footerEnd), footerStart, footerEnd)
    val msg = rejects(f, None, footerStart, footerEnd)
    assert(msg.contains("footer offsets"), msg)
  }

  test("a file cut at the footer and padded back to size is rejected") {
    val f = copy("overwritten.split")
    val raf = new RandomAccessFile(f, "rw")
    try {
      raf.seek(footerStart)
      raf.write(new Array[Byte]((footerEnd - footerStart).toInt))
    } finally raf.close()
    rejects(f, Some(footerEnd), footerStart, footerEnd)
  }

  test("wrong footer offsets are rejected") {
    Seq(
      (footerStart + 1, footerEnd),
      (footerStart - 1, footerEnd),
      (footerStart, footerEnd - 1),
      (footerStart, footerEnd + 1),
      (0L, footerEnd),
      (-1L, footerEnd),
      (footerEnd - 8, footerEnd),
      (footerEnd, footerEnd)
    ).foreach { case (s, e) =>
      val msg = rejects(splitFile, None, s, e)
      assert(msg.contains("Cannot read split file"), s"$s-$e: $msg")
    }
  }

  test("regression: a footer whose metadata is shorter than its header is rejected, not thrown") {
    // [magic][metadata length 4][4 hotcache bytes][hotcache length 4]: every length is
    // consistent, but the metadata has no room for the version and the JSON that follow.
    val footer = java.nio.ByteBuffer.allocate(16).order(java.nio.ByteOrder.LITTLE_ENDIAN)
      .putInt(0x1812beae).putInt(4).putInt(0).putInt(4).array()
    val f = new File(dir, "short-metadata.split")
    Files.write(f.toPath, new Array[Byte](64) ++ footer)
    val msg = rejects(f, Some(80L), 64L, 80L)
    assert(msg.contains("Cannot read split file"), msg)
  }
}

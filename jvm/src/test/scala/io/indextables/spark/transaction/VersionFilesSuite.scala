package io.indextables.spark.transaction

import java.io.{ByteArrayOutputStream, File}
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.util.zip.GZIPOutputStream

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.TransactionLogException

class VersionFilesSuite extends AnyFunSuite {
  import TransactionTestUtils._

  private val file = new Path("/tables/t1/_transaction_log/00000000000000000007.json")
  private val actions: Seq[Action] = Seq(
    Protocol,
    metadata(),
    add("splits/a.split"),
    RemoveAction("splits/b.split", Some(3L), dataChange = true))

  private def gzip(bytes: Array[Byte]): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val gz = new GZIPOutputStream(out)
    gz.write(bytes)
    gz.close()
    out.toByteArray
  }

  private def assertNamesFile(bytes: Array[Byte]): TransactionLogException = {
    val e = intercept[TransactionLogException](VersionFiles.decode(file, bytes))
    assert(e.getMessage.contains(file.toString), e.getMessage)
    e
  }

  test("file names are 20-digit zero-padded versions") {
    assert(VersionFiles.fileName(0) === "00000000000000000000.json")
    assert(VersionFiles.fileName(42) === "00000000000000000042.json")
    assert(VersionFiles.versionOf("00000000000000000042.json") === Some(42L))
    assert(VersionFiles.versionOf("_last_checkpoint") === None)
    assert(VersionFiles.versionOf(".00000000000000000000.json.crc") === None)
    assert(VersionFiles.versionOf("00000000000000000042.checkpoint.json") === None)
  }

  test("compressed form is 01 01 followed by a gzip stream of newline-terminated lines") {
    val bytes = VersionFiles.encode(actions, compressed = true)
    assert(bytes.take(4).map(_ & 0xff).toSeq === Seq(0x01, 0x01, 0x1f, 0x8b))
    assert(VersionFiles.decode(file, bytes) === actions)
  }

  test("plain form is UTF-8 JSON lines and decodes back") {
    val bytes = VersionFiles.encode(actions, compressed = false)
    val text = new String(bytes, UTF_8)
    assert(text.endsWith("\n") && text.split('\n').length === actions.size)
    assert(VersionFiles.decode(file, bytes) === actions)
  }

  test("bare gzip without the 01 01 prefix decodes") {
    val bytes = gzip(VersionFiles.encode(actions, compressed = false))
    assert(VersionFiles.decode(file, bytes) === actions)
  }

  test("a truncated compressed file gives an error naming the file") {
    val bytes = VersionFiles.encode(actions, compressed = true)
    assertNamesFile(bytes.take(bytes.length / 2))
    assertNamesFile(bytes.take(2))
  }

  test("a corrupt gzip stream gives an error naming the file") {
    val bytes = VersionFiles.encode(actions, compressed = true)
    val corrupt = bytes.clone()
    (12 until corrupt.length - 8).foreach(i => corrupt(i) = (corrupt(i) ^ 0x5a).toByte)
    assertNamesFile(corrupt)
  }

  test("a truncated plain file and an empty file give errors naming the file") {
    val bytes = VersionFiles.encode(actions, compressed = false)
    val e = assertNamesFile(bytes.take(bytes.length - 10))
    assert(e.getMessage.contains("line 4"))
    assertNamesFile(Array.emptyByteArray)
  }

  test("version 0 of every 0.5.4 fixture decodes to protocol 4/4 and indextables metadata") {
    val root = interopFixtures.getOrElse(cancel("../shared/data/interop is absent"))
    val tables = root.listFiles().filter(d => new File(d, "_transaction_log").isDirectory)
    assert(tables.length >= 7)
    tables.foreach { t =>
      val f = new File(t, "_transaction_log/00000000000000000000.json")
      val decoded = VersionFiles.decode(new Path(f.toURI), Files.readAllBytes(f.toPath))
      val protocol = decoded.collect { case p: ProtocolAction => p }
      val meta = decoded.collect { case m: MetadataAction => m }
      assert(protocol === Seq(ProtocolAction(4, 4, None, None)), t.getName)
      assert(meta.size === 1, t.getName)
      assert(meta.head.format === FileFormat("indextables", Map.empty), t.getName)
      assert(meta.head.name === None && meta.head.description === None)
      assert(meta.head.schemaString.startsWith("""{"type":"struct""""), t.getName)
      val expectedPartitions = if (t.getName == "04_partitioned") Seq("date") else Seq.empty
      assert(meta.head.partitionColumns === expectedPartitions, t.getName)
      // Written back by us, a reference line comes out byte for byte the same.
      val lines = decoded.map(ActionSerde.toJson)
      assert(lines.head ===
        """{"protocol":{"minReaderVersion":4,"minWriterVersion":4,"readerFeatures":null,"writerFeatures":null}}""")
    }
  }
}

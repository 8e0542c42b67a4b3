package io.indextables.spark.transaction

import java.io.ByteArrayInputStream
import java.nio.charset.StandardCharsets.UTF_8

import org.apache.avro.file.{CodecFactory, DataFileStream}
import org.apache.avro.generic.{GenericDatumReader, GenericRecord}
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.TransactionLogException
import io.indextables.spark.transaction.state._

/**
 * The block index of shared manifests: blocks end at partition changes, the header lists each
 * block's partition bounds, and a read of some partitions leaves the other blocks unread,
 * never trusting an index that disagrees with the blocks.
 */
class ManifestBlockIndexSuite extends AnyFunSuite {

  private val days = Seq("2024-01-01", "2024-01-02", "2024-01-03")

  /** 3 days of 600 entries each, a few blocks per day, sorted by day as compaction writes. */
  private val entries: Seq[FileEntry] = for {
    d <- days
    i <- 0 until 600
  } yield FileEntry(
    TransactionTestUtils.add(s"date=$d/part-$i-${"x" * 40}.split").copy(
      partitionValues = Map("date" -> d),
      minValues =
        Some(Map("host" -> f"host-$i%04d", "level" -> "DEBUG", "ts" -> s"${d}T00:00:00Z")),
      maxValues =
        Some(Map("host" -> f"host-${i + 9}%04d", "level" -> "WARN", "ts" -> s"${d}T23:59:59Z"))
    ),
    addedAtVersion = i.toLong,
    addedAtTimestamp = 1000L + i
  )

  private def encode(es: Seq[FileEntry], codec: CodecFactory = CodecFactory.zstandardCodec(3)) =
    AvroStateCodec.encodeFileEntries(es, codec, Seq("date"))

  private def only(day: String): Map[String, PartitionBounds] => Boolean =
    b => b.get("date").forall(pb => pb.min.forall(_ <= day) && pb.max.forall(_ >= day))

  private def decodeDay(bytes: Array[Byte], day: String): Seq[FileEntry] =
    AvroStateCodec.decodeFileEntries(bytes, pv => pv.get("date").contains(day), only(day))

  private def meta(bytes: Array[Byte], key: String): Option[String] = {
    val s = new DataFileStream[GenericRecord](
      new ByteArrayInputStream(bytes),
      new GenericDatumReader[GenericRecord]())
    try Option(s.getMetaString(key))
    finally s.close()
  }

  /** [start, end) of each block's data: the sync marker is the file's last 16 bytes. */
  private def blockData(bytes: Array[Byte]): Seq[(Int, Int)] = {
    val sync = bytes.takeRight(16)
    val syncs = bytes.indices.filter(i =>
      i + 16 <= bytes.length &&
        java.util.Arrays.equals(bytes, i, i + 16, sync, 0, 16))
    syncs.sliding(2).collect { case Seq(a, b) =>
      var at = a + 16
      for (_ <- 0 until 2) { while ((bytes(at) & 0x80) != 0) at += 1; at += 1 } // count, size
      (at, b)
    }.toSeq
  }

  test("a partitioned manifest's header lists its blocks' bounds; blocks do not span days") {
    val bytes = encode(entries)
    val index = meta(bytes, AvroStateCodec.BlockBoundsKey).get
    val node = new com.fasterxml.jackson.databind.ObjectMapper().readTree(index).get("blocks")
    assert(node.size === days.size, index) // one run of blocks per day
    val counts = (0 until node.size).map(i => node.get(i).get("records"))
    assert(counts.forall(_.size > 1), "each day spans several blocks")
    assert(counts.map(c => (0 until c.size).map(c.get(_).asLong).sum) === days.map(_ => 600L))
    assert((0 until node.size).map(i =>
      node.get(i).get("bounds").get("date").get("min").asText) === days)
    assert(blockData(bytes).size === counts.map(_.size).sum)
    // Readers that know nothing of the index read every entry, in order.
    assert(AvroStateCodec.decodeFileEntries(bytes) === entries)
  }

  test("a read of one day passes over the other days' blocks without decompressing them") {
    val bytes = encode(entries)
    assert(decodeDay(
      bytes,
      "2024-01-02") === entries.filter(_.add.partitionValues("date") == "2024-01-02"))
    // Corrupt the compressed data of the first block (2024-01-01): a read of another day does
    // not touch it, and a read that needs it fails.
    val (start, end) = blockData(bytes).head
    val broken = bytes.clone()
    java.util.Arrays.fill(broken, start + 8, end - 8, 0x5a.toByte)
    assert(decodeDay(
      broken,
      "2024-01-03") === entries.filter(_.add.partitionValues("date") == "2024-01-03"))
    intercept[Exception](decodeDay(broken, "2024-01-01"))
    intercept[Exception](AvroStateCodec.decodeFileEntries(broken))
  }

  Seq(
    "zstd" -> CodecFactory.zstandardCodec(3),
    "snappy" -> CodecFactory.snappyCodec(),
    "none" -> CodecFactory.nullCodec(),
    "deflate" -> CodecFactory.deflateCodec(6),
    "xz (read through Avro's own reader)" -> CodecFactory.xzCodec(1)
  ).foreach { case (name, codec) =>
    test(s"every codec reads back the same entries, whole and by day: $name") {
      val bytes = encode(entries, codec)
      assert(AvroStateCodec.decodeFileEntries(bytes) === entries)
      days.foreach(d =>
        assert(decodeDay(bytes, d) === entries.filter(_.add.partitionValues("date") == d)))
    }
  }

  test("an index that disagrees with the blocks is an error, never a silent skip") {
    val bytes = encode(entries)
    val index = meta(bytes, AvroStateCodec.BlockBoundsKey).get
    val first = "\"records\":["
    val at = index.indexOf(first) + first.length
    val n = index.substring(at).takeWhile(_.isDigit)
    val wrong = (n.toInt - 1).toString.reverse.padTo(n.length, '1').reverse
    val tampered = replaceOnce(bytes, first + n + ",", first + wrong + ",")
    val e = intercept[TransactionLogException](decodeDay(tampered, "2024-01-03"))
    assert(e.getMessage.contains("block index"), e.getMessage)
    assert(e.getErrorClass === "INDEXTABLES_LOG_MALFORMED_STATE")
    // A read of every entry does not use the index.
    assert(AvroStateCodec.decodeFileEntries(tampered) === entries)
  }

  test("an index we cannot parse is ignored: every block is read") {
    val bytes = encode(entries)
    val tampered = replaceOnce(bytes, "{\"blocks\":", "{\"blockz\":")
    assert(decodeDay(
      tampered,
      "2024-01-02") === entries.filter(_.add.partitionValues("date") == "2024-01-02"))
  }

  test("manifests without an index (unpartitioned, or other writers') read with a bounds filter") {
    val plain = AvroStateCodec.encodeFileEntries(entries, CodecFactory.zstandardCodec(3))
    assert(meta(plain, AvroStateCodec.BlockBoundsKey).isEmpty)
    assert(decodeDay(
      plain,
      "2024-01-01") === entries.filter(_.add.partitionValues("date") == "2024-01-01"))
  }

  test(
    "small partitions share blocks, a huge entry gets its own, and NULL partitions are bounded") {
    val huge = FileEntry(
      TransactionTestUtils.add("date=2024-01-02/huge.split").copy(
        partitionValues = Map("date" -> "2024-01-02"),
        stats = Some("s" * (700 * 1024))),
      7L,
      8L)
    val tiny = (0 until 200).map { i =>
      val d = if (i % 50 == 0) None else Some(f"2023-12-${i % 28 + 1}%02d")
      FileEntry(
        TransactionTestUtils.add(s"t$i.split").copy(
          partitionValues = d.map(v => Map("date" -> v)).getOrElse(Map.empty)),
        1L,
        1L)
    }.sortBy(_.add.partitionValues.getOrElse("date", ""))
    val all = tiny ++ entries.take(300) ++ Seq(huge) ++ entries.slice(600, 700)
    val bytes = encode(all)
    assert(AvroStateCodec.decodeFileEntries(bytes) === all)
    assert(decodeDay(
      bytes,
      "2024-01-02") === all.filter(_.add.partitionValues.get("date").contains("2024-01-02")))
    assert(decodeDay(
      bytes,
      "2023-12-05") === all.filter(_.add.partitionValues.get("date").contains("2023-12-05")))
    // Entries with a NULL partition value (an absent key) are in blocks a bounds filter keeps.
    val nullOnes = AvroStateCodec.decodeFileEntries(
      bytes,
      pv => !pv.contains("date"),
      b => b.get("date").forall(pb => pb.min.isEmpty || pb.min.exists(_ < "2024")))
    assert(nullOnes.map(
      _.add.path) === tiny.filterNot(_.add.partitionValues.contains("date")).map(_.add.path))
  }

  private def replaceOnce(bytes: Array[Byte], from: String, to: String): Array[Byte] = {
    require(from.length == to.length)
    val f = from.getBytes(UTF_8)
    val at = bytes.indices.find(i =>
      i + f.length <= bytes.length &&
        java.util.Arrays.equals(bytes, i, i + f.length, f, 0, f.length)).get
    val out = bytes.clone()
    System.arraycopy(to.getBytes(UTF_8), 0, out, at, f.length)
    out
  }
}

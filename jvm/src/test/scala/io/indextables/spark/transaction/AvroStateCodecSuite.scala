package io.indextables.spark.transaction

import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.transaction.state._

/** Round trips of the checkpoint forms: Avro state records and the `_last_checkpoint` pointer. */
class AvroStateCodecSuite extends AnyFunSuite {

  private val fullAdd = AddAction(
    path = "date=2024-01-01/splits/split-abc.split",
    partitionValues = Map("date" -> "2024-01-01"),
    size = 1048576L,
    modificationTime = 1704067200000L,
    dataChange = false,
    stats = Some("""{"numRecords":1000}"""),
    minValues = Some(Map("score" -> "0.1")),
    maxValues = Some(Map("score" -> "0.9")),
    numRecords = Some(1000L),
    hasFooterOffsets = true,
    footerStartOffset = Some(900000L),
    footerEndOffset = Some(1048500L),
    splitTags = Some(Set("a", "b")),
    numMergeOps = Some(2),
    docMappingRef = Some("ab12cd34ef56gh78"),
    uncompressedSizeBytes = Some(2000000L)
  )

  Seq("zstd", "snappy", "none").foreach { codec =>
    test(s"every FileEntry field round-trips ($codec)") {
      val entries = Seq(
        FileEntry(fullAdd, 42L, 1704067200001L),
        FileEntry(TransactionTestUtils.add("p"), 0L, 0L))
      val bytes = AvroStateCodec.encodeFileEntries(entries, AvroStateCodec.codec(codec, 3))
      assert(AvroStateCodec.decodeFileEntries(bytes) === entries)
    }
  }

  test(
    "companion entries keep their files' sizes, doc order and source vectors in 0.5.4's schema " +
      "plus three fields") {
    val companion = fullAdd.copy(
      companionSourceFiles = Some(Seq("a.parquet", "b.parquet")),
      companionFastFieldMode = Some("DISABLED"),
      companionSourceFileSizes = Some(Seq(123L, 4567L)),
      companionDocsInRowOrder = Some(true),
      companionSourceDeletionVectors = Some(Seq("", "u1@2"))
    )
    val entries = Seq(FileEntry(companion, 3L, 4L), FileEntry(fullAdd, 1L, 2L))
    val bytes = AvroStateCodec.encodeFileEntries(entries, AvroStateCodec.codec("zstd", 3))
    assert(AvroStateCodec.decodeFileEntries(bytes) === entries)
    assert(AvroStateCodec.decodeFileEntries(bytes).head.add.companionSizes ===
      Map("a.parquet" -> 123L, "b.parquet" -> 4567L))
    val reader = new org.apache.avro.file.DataFileStream[AnyRef](
      new java.io.ByteArrayInputStream(bytes),
      new org.apache.avro.generic.GenericDatumReader[AnyRef]())
    val written =
      try reader.getSchema
      finally reader.close()
    val upstream = AvroStateCodec.FileEntrySchema
    import scala.jdk.CollectionConverters._
    assert(written.getFields.asScala.map(_.name).toList ===
      upstream.getFields.asScala.map(_.name).toList :+ "companionSourceFileSizes" :+
      "companionDocsInRowOrder" :+ "companionSourceDeletionVectors")
    upstream.getFields.asScala.foreach(f =>
      assert(written.getField(f.name).toString === f.toString))
    // A reader with 0.5.4's schema resolves the entries and skips the sizes.
    val resolving = new org.apache.avro.file.DataFileStream[org.apache.avro.generic.GenericRecord](
      new java.io.ByteArrayInputStream(bytes),
      new org.apache.avro.generic.GenericDatumReader[org.apache.avro.generic.GenericRecord](
        written,
        upstream))
    try assert(resolving.next().get("path").toString === companion.path)
    finally resolving.close()
    // Manifests of entries without sizes keep 0.5.4's schema exactly.
    val plain = AvroStateCodec.encodeFileEntries(
      Seq(FileEntry(fullAdd, 1L, 2L)),
      AvroStateCodec.codec("none", 0))
    val plainReader = new org.apache.avro.file.DataFileStream[AnyRef](
      new java.io.ByteArrayInputStream(plain),
      new org.apache.avro.generic.GenericDatumReader[AnyRef]())
    try assert(plainReader.getSchema === upstream)
    finally plainReader.close()
  }

  test("wide statistics maps round-trip and behave as ordinary maps") {
    val wide = (1 to 12).map(i => s"col$i" -> s"v$i").toMap
    val add = fullAdd.copy(minValues = Some(wide), maxValues = Some(wide + ("col13" -> "x")))
    val bytes = AvroStateCodec.encodeFileEntries(
      Seq(FileEntry(add, 1L, 2L)),
      AvroStateCodec.codec("zstd", 3))
    val back = AvroStateCodec.decodeFileEntries(bytes).head.add
    assert(back === add)
    val m = back.minValues.get
    assert(m === wide && m.hashCode === wide.hashCode && m("col7") === "v7")
    assert(m.get("nope").isEmpty && (m - "col1").size === 11 && (m + ("x" -> "y"))("x") === "y")
    assert(m.updated("col1", "z")("col1") === "z" && back.maxValues.get("col13") === "x")
    val copy = org.apache.commons.lang3.SerializationUtils.roundtrip(
      m.asInstanceOf[java.io.Serializable])
    assert(copy === m)
  }

  test("entries written with another schema: unknown fields are skipped, absent ones are None") {
    import org.apache.avro.SchemaBuilder
    import org.apache.avro.file.DataFileWriter
    import org.apache.avro.generic.{GenericData, GenericDatumWriter, GenericRecord}
    val extra = SchemaBuilder.record("Extra").fields().requiredLong("n").endRecord()
    val schema = SchemaBuilder.record("FileEntry").fields()
      .requiredString("path").requiredLong("size")
      .name("future").`type`(extra).noDefault()
      .name("tags").`type`().array().items().stringType().noDefault()
      .optionalLong("numRecords")
      .requiredLong("addedAtVersion")
      .endRecord()
    val r = new GenericData.Record(schema)
    r.put("path", "p.split")
    r.put("size", 7L)
    val e = new GenericData.Record(extra)
    e.put("n", 1L)
    r.put("future", e)
    r.put("tags", java.util.Arrays.asList("x"))
    r.put("numRecords", 5L)
    r.put("addedAtVersion", 3L)
    val out = new java.io.ByteArrayOutputStream()
    val w = new DataFileWriter[GenericRecord](new GenericDatumWriter[GenericRecord](schema))
    w.create(schema, out)
    w.append(r)
    w.close()
    val back = AvroStateCodec.decodeFileEntries(out.toByteArray)
    assert(back === Seq(FileEntry(
      AddAction(
        "p.split",
        Map.empty,
        7L,
        0L,
        dataChange = true,
        numRecords = Some(5L)),
      3L,
      0L)))
  }

  test("decoding with a partition filter keeps exactly the accepted entries, values intact") {
    def e(path: String, pv: Map[String, String]) =
      FileEntry(fullAdd.copy(path = path, partitionValues = pv), 1L, 2L)
    val entries = Seq(
      e("a", Map("d" -> "1", "h" -> "x")),
      e("b", Map("d" -> "1", "h" -> "x")),
      e("c", Map("d" -> "2", "h" -> "x")),
      e("d", Map("d" -> "2", "h" -> "x")),
      e("e", Map("d" -> "1", "h" -> "y")),
      e("f", Map("h" -> "x")),
      e("g", Map.empty),
      e("h", Map("d" -> "1", "h" -> "x")),
      e("i", Map("d" -> "\u00e9t\u00e9", "h" -> "x"))
    )
    val bytes = AvroStateCodec.encodeFileEntries(entries, AvroStateCodec.codec("zstd", 3))
    var calls = 0
    val kept = AvroStateCodec.decodeFileEntries(
      bytes,
      pv => {
        calls += 1
        pv.get("d").exists(d => d == "1" || d.startsWith("\u00e9"))
      })
    assert(kept === entries.filter(x => Set("a", "b", "e", "h", "i")(x.add.path)))
    // Runs of equal partition values are judged once.
    assert(calls === 7)
    assert(AvroStateCodec.decodeFileEntries(bytes, _ => true) === entries)
  }

  test("every StateManifest field round-trips, bounds and null bounds included") {
    val m = StateManifest(
      formatVersion = 1,
      stateVersion = 42L,
      createdAt = 1704067200000L,
      numFiles = 15000L,
      totalBytes = 1099511627776L,
      manifests = Seq(
        ManifestInfo(
          "manifests/manifest-a1b2c3d4.avro",
          50000L,
          0L,
          42L,
          Some(Map(
            "date" -> PartitionBounds(Some("2024-01-01"), Some("2024-01-31")),
            "region" -> PartitionBounds(None, None))),
          tombstoneCount = 3L,
          liveEntryCount = 7L
        ),
        ManifestInfo("manifest-legacy.avro", 1L, 5L, 5L, None)
      ),
      tombstones = Seq("splits/old.split"),
      schemaRegistry = Map("ab12cd34ef56gh78" -> """[{"name":"title"}]"""),
      protocolVersion = 4,
      metadata = Some("""{"metaData":{"id":"x"}}""")
    )
    val bytes = AvroStateCodec.encodeStateManifest(m, AvroStateCodec.codec("zstd", 3))
    assert(AvroStateCodec.decodeStateManifest(bytes) === m)
  }

  test("_last_checkpoint round-trips in its three forms") {
    Seq(
      LastCheckpoint(
        42L,
        15000L,
        104857600L,
        15000L,
        1704067200000L,
        format = Some("avro-state"),
        stateDir = Some("state-v00000000000000000042")),
      LastCheckpoint(10L, 12L, 500L, 10L, 1L, format = Some("json")),
      LastCheckpoint(
        10L,
        12L,
        500L,
        10L,
        1L,
        parts = Some(3),
        checkpointId = Some("abc"),
        format = Some("json-multipart"))
    ).foreach { cp =>
      assert(LastCheckpoint.fromJson(cp.toJson) === cp)
    }
    val legacy = LastCheckpoint.fromJson("""{"version":3,"size":1,"sizeInBytes":2,
      "numFiles":1,"createdTime":5,"checkpointId":"id"}""".getBytes("UTF-8"))
    assert(legacy.isMultiPart && !legacy.isAvroState)
  }

  test("an unknown compression is refused with the accepted values") {
    val e = intercept[IndexTablesException](AvroStateCodec.codec("lz4", 1))
    assert(e.getMessage.contains("zstd, snappy or none"))
    assert(e.getErrorClass === "INDEXTABLES_INVALID_OPTION" && e.getSqlState === "22023")
  }
}

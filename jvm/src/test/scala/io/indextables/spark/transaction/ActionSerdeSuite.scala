package io.indextables.spark.transaction

import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.TransactionLogException

class ActionSerdeSuite extends AnyFunSuite {

  private def roundTrip(a: Action): Unit = {
    val json = ActionSerde.toJson(a)
    assert(!json.contains("\n"), s"not one line: $json")
    assert(ActionSerde.fromJson(json) === a, s"through $json")
  }

  private val fullAdd = AddAction(
    path = "date=2024-01-01/splits/split-abc123.split",
    partitionValues = Map("date" -> "2024-01-01", "region" -> null),
    size = 1048576L,
    modificationTime = 1704067200000L,
    dataChange = false,
    stats = Some("""{"numRecords":1000}"""),
    minValues = Some(Map("score" -> "0.1", "name" -> "a\"b\\c\u00e9")),
    maxValues = Some(Map("score" -> "0.9")),
    numRecords = Some(5000000000L),
    hasFooterOffsets = true,
    footerStartOffset = Some(900000L),
    footerEndOffset = Some(1048500L),
    splitTags = Some(Set("hot", "merged")),
    numMergeOps = Some(3),
    docMappingRef = Some("ab12cd34ef56gh78"),
    docMappingJson = Some("""[{"name":"title","type":"text"}]"""),
    uncompressedSizeBytes = Some(4194304L)
  )

  test("protocol round-trips with and without feature sets") {
    roundTrip(ProtocolAction(1, 2))
    roundTrip(ProtocolAction(4, 4, Some(Set("avroState", "schemaDeduplication")), Some(Set())))
  }

  test("metaData round-trips with optional fields set and unset") {
    roundTrip(TransactionTestUtils.metadata())
    roundTrip(MetadataAction(
      id = "id-1",
      name = Some("events"),
      description = Some("all events"),
      format = FileFormat("indextables", Map("k" -> "v")),
      schemaString = """{"type":"struct","fields":[{"name":"a","type":"string"}]}""",
      partitionColumns = Seq("date", "hour"),
      configuration = Map("docMappingSchema.ab12cd34ef56gh78" -> "[]", "x" -> "y"),
      createdTime =
        None
    ))
  }

  test("add round-trips with every optional field set, and with none") {
    roundTrip(fullAdd)
    roundTrip(AddAction("splits/a.split", Map.empty, 1L, 2L, dataChange = true))
    roundTrip(fullAdd.copy(
      companionSourceFiles = Some(Seq("a.parquet", "b.parquet")),
      companionFastFieldMode = Some("DISABLED"),
      companionSourceFileSizes = Some(Seq(10L, 5000000000L)),
      companionDocsInRowOrder = Some(false),
      companionSourceDeletionVectors = Some(Seq("", "uabc@1"))
    ))
  }

  test("remove round-trips with optional fields set and unset") {
    roundTrip(RemoveAction("splits/a.split", None, dataChange = true))
    roundTrip(RemoveAction(
      "splits/a.split",
      Some(5L),
      dataChange = false,
      partitionValues = Some(Map("date" -> null, "k" -> "v")),
      size = Some(42L)))
  }

  test("mergeskip round-trips with and without retryAfter") {
    roundTrip(MergeSkipAction("splits/c.split", 1L, "Corrupted index footer", "merge", None, 1))
    roundTrip(MergeSkipAction("splits/c.split", 1L, "r", "merge", Some(2L), 7))
  }

  test("a null partition value is kept as a null entry and written back as JSON null") {
    val line = """{"add":{"path":"p","partitionValues":{"date":null,"x":"1"},"size":1,""" +
      """"modificationTime":2,"dataChange":true}}"""
    val a = ActionSerde.fromJson(line).asInstanceOf[AddAction]
    assert(a.partitionValues.contains("date"))
    assert(a.partitionValues("date") === null)
    assert(ActionSerde.toJson(a).contains(""""partitionValues":{"date":null,"x":"1"}"""))
  }

  test("absent optional fields are written as null, like the reference implementation") {
    val json = ActionSerde.toJson(ProtocolAction(4, 4))
    assert(json ===
      """{"protocol":{"minReaderVersion":4,"minWriterVersion":4,"readerFeatures":null,"writerFeatures":null}}""")
    val meta = ActionSerde.toJson(TransactionTestUtils.metadata())
    assert(meta.contains(
      """"name":null,"description":null,"format":{"provider":"indextables","options":{}}"""))
  }

  test("unknown fields are ignored") {
    val line = """{"remove":{"path":"p","dataChange":true,"future":{"nested":[1,2]},"extra":7}}"""
    assert(ActionSerde.fromJson(line) === RemoveAction("p", None, dataChange = true))
  }

  test("an unknown action key is an error that names the key") {
    val e = intercept[TransactionLogException] {
      ActionSerde.fromJson("""{"commitInfo":{"operation":"WRITE"}}""")
    }
    assert(e.getMessage.contains("commitInfo"))
    assert(e.getErrorClass === "INDEXTABLES_LOG_MALFORMED_ACTION" && e.getSqlState === "XX001")
  }

  test("a missing required field is an error that names the action and the field") {
    val e = intercept[TransactionLogException] {
      ActionSerde.fromJson(
        """{"add":{"path":"p","partitionValues":{},"modificationTime":1,"dataChange":true}}""")
    }
    assert(e.getMessage.contains("'add'") && e.getMessage.contains("'size'"))
  }

  test("a field of the wrong type is an error that names it") {
    val e = intercept[TransactionLogException] {
      ActionSerde.fromJson("""{"protocol":{"minReaderVersion":"four","minWriterVersion":4}}""")
    }
    assert(e.getMessage.contains("minReaderVersion"))
  }
}

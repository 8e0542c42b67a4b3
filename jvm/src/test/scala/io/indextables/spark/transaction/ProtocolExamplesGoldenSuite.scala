package io.indextables.spark.transaction

import java.nio.charset.StandardCharsets.UTF_8

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

/** The examples of protocol.md, written as the lines of one version file, parse as documented. */
class ProtocolExamplesGoldenSuite extends AnyFunSuite {

  private val versionFile: String = Seq(
    """{"protocol":{"minReaderVersion":4,"minWriterVersion":4,"readerFeatures":["avroState","schemaDeduplication"],"writerFeatures":["avroState","schemaDeduplication"]}}""",
    """{"metaData":{"id":"550e8400-e29b-41d4-a716-446655440000","format":{"provider":"indextables","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":["date"],"configuration":{"docMappingSchema.ab12cd34ef56gh78":"[{\"name\":\"title\"}]"},"createdTime":1704067200000}}""",
    """{"add":{"path":"date=2024-01-01/splits/split-abc123.split","partitionValues":{"date":"2024-01-01"},"size":1048576,"modificationTime":1704067200000,"dataChange":true,"minValues":{"score":"0.1"},"maxValues":{"score":"0.9"},"numRecords":1000,"hasFooterOffsets":true,"footerStartOffset":900000,"footerEndOffset":1048500,"docMappingRef":"ab12cd34ef56gh78"}}""",
    """{"remove":{"path":"splits/old-split.split","deletionTimestamp":1704153600000,"dataChange":true}}""",
    """{"mergeskip":{"path":"splits/corrupted.split","skipTimestamp":1704067200000,"reason":"Corrupted index footer","operation":"merge","retryAfter":1704153600000,"skipCount":1}}"""
  ).mkString("", "\n", "\n")

  private val expected: Seq[Action] = Seq(
    ProtocolAction(4, 4, Some(Set("avroState", "schemaDeduplication")),
      Some(Set("avroState", "schemaDeduplication"))),
    MetadataAction(
      id = "550e8400-e29b-41d4-a716-446655440000",
      format = FileFormat("indextables", Map.empty),
      schemaString = """{"type":"struct","fields":[]}""",
      partitionColumns = Seq("date"),
      configuration = Map("docMappingSchema.ab12cd34ef56gh78" -> """[{"name":"title"}]"""),
      createdTime = Some(1704067200000L)),
    AddAction(
      path = "date=2024-01-01/splits/split-abc123.split",
      partitionValues = Map("date" -> "2024-01-01"),
      size = 1048576L,
      modificationTime = 1704067200000L,
      dataChange = true,
      minValues = Some(Map("score" -> "0.1")),
      maxValues = Some(Map("score" -> "0.9")),
      numRecords = Some(1000L),
      hasFooterOffsets = true,
      footerStartOffset = Some(900000L),
      footerEndOffset = Some(1048500L),
      docMappingRef = Some("ab12cd34ef56gh78")),
    RemoveAction("splits/old-split.split", Some(1704153600000L), dataChange = true),
    MergeSkipAction("splits/corrupted.split", 1704067200000L, "Corrupted index footer", "merge",
      Some(1704153600000L), 1))

  test("protocol.md examples parse to the expected actions") {
    val actions = VersionFiles.decode(new Path("/golden/00000000000000000000.json"),
      versionFile.getBytes(UTF_8))
    assert(actions === expected)
  }

  test("protocol.md examples survive a write and re-read in the compressed form") {
    val bytes = VersionFiles.encode(expected, compressed = true)
    assert(VersionFiles.decode(new Path("/golden/x.json"), bytes) === expected)
  }
}

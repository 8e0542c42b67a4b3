package io.indextables.spark.transaction

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

/** The examples of protocol.md, written as the lines of one version file, parse as documented. */
class ProtocolExamplesGoldenSuite extends AnyFunSuite {

  /** protocol.md's five examples, one per line, as a plain (uncompressed) version file. */
  private val versionFile: Array[Byte] = {
    val in = getClass.getResourceAsStream("golden/protocol-examples.json")
    assert(in != null, "golden/protocol-examples.json is missing from test resources")
    try in.readAllBytes()
    finally in.close()
  }

  private val expected: Seq[Action] = Seq(
    ProtocolAction(
      4,
      4,
      Some(Set("avroState", "schemaDeduplication")),
      Some(Set("avroState", "schemaDeduplication"))),
    MetadataAction(
      id = "550e8400-e29b-41d4-a716-446655440000",
      format = FileFormat("indextables", Map.empty),
      schemaString = """{"type":"struct","fields":[]}""",
      partitionColumns = Seq("date"),
      configuration = Map("docMappingSchema.ab12cd34ef56gh78" -> """[{"name":"title"}]"""),
      createdTime = Some(1704067200000L)
    ),
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
      docMappingRef = Some("ab12cd34ef56gh78")
    ),
    RemoveAction("splits/old-split.split", Some(1704153600000L), dataChange = true),
    MergeSkipAction(
      "splits/corrupted.split",
      1704067200000L,
      "Corrupted index footer",
      "merge",
      Some(1704153600000L),
      1)
  )

  test("protocol.md examples parse to the expected actions") {
    val actions = VersionFiles.decode(new Path("/golden/protocol-examples.json"), versionFile)
    assert(actions === expected)
  }

  test("protocol.md examples survive a write and re-read in the compressed form") {
    val bytes = VersionFiles.encode(expected, compressed = true)
    assert(VersionFiles.decode(new Path("/golden/x.json"), bytes) === expected)
  }
}

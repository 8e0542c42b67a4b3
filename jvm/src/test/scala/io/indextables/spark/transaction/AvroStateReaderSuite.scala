package io.indextables.spark.transaction

import java.io.File

import org.apache.hadoop.fs.Path
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.transaction.TransactionTestUtils._
import io.indextables.spark.transaction.state.{AvroStateCodec, AvroStateReader}

/** Reads the Avro states of the 0.5.4 interop fixtures, and checks the state reader's rules. */
class AvroStateReaderSuite extends AnyFunSuite {

  private def fixture(name: String): File = {
    val root = interopFixtures.getOrElse(cancel("../shared/data/interop is absent"))
    new File(root, name)
  }

  private def open(dir: File): TransactionLog = {
    TransactionLog.clearCache()
    TransactionTestUtils.logFor(dir.getAbsolutePath, hadoopConf, Map.empty)
  }

  /** fixture -> (latest version, live files, records) from the fixtures' own states. */
  private val expected = Seq(
    ("01_single_write", 1L, 2, None),
    ("02_five_appends", 5L, 10, None),
    ("03_with_removes", 4L, 1, None),
    ("04_partitioned", 1L, 3, Some(5L)),
    ("06_schema_dedup", 12L, 24, None),
    ("14_after_merge", 5L, 1, None),
    ("16_with_skip_actions", 6L, 12, None)
  )

  expected.foreach { case (name, version, files, records) =>
    test(s"fixture $name: latest version, live files and resolvable doc mappings") {
      val log = open(fixture(name))
      val snap = log.snapshot()
      assert(snap.version === version)
      assert(snap.numFiles === files)
      records.foreach(r => assert(snap.allFiles.flatMap(_.numRecords).sum === r))
      snap.allFiles.foreach { a =>
        assert(snap.docMappingFor(a).isDefined, s"${a.path} has no doc mapping")
        assert(a.hasFooterOffsets && a.footerEndOffset.contains(a.size))
        assert(new File(fixture(name), a.path).isFile, s"${a.path} is not in the fixture")
      }
      val pointer = log.lastCheckpoint().get
      assert(pointer.isAvroState && pointer.numFiles === files)
    }
  }

  test("fixture 02_five_appends: every earlier state reads, and shared manifests are reused") {
    val log = open(fixture("02_five_appends"))
    (1L to 5L).foreach(v => assert(log.snapshotAt(v).numFiles === 2 * v))
    val m4 = AvroStateReader.readManifest(log.store, log.logPath, "state-v00000000000000000004")
    val m5 = AvroStateReader.readManifest(log.store, log.logPath, "state-v00000000000000000005")
    assert(m4.manifests.map(_.path) === m5.manifests.map(_.path).take(4))
  }

  test("fixture 03_with_removes: the overwrite leaves only the new split") {
    val log = open(fixture("03_with_removes"))
    assert(log.snapshotAt(3).numFiles === 6)
    val latest = log.snapshot()
    assert(latest.allFiles.map(_.path) === Seq("part-e0501767-17f9-4a92-bbb3-1fd774a03c26.split"))
  }

  test("fixture 04_partitioned: partition values and manifest partition bounds") {
    val log = open(fixture("04_partitioned"))
    val snap = log.snapshot()
    assert(snap.allFiles.map(_.partitionValues("date")).sorted ===
      Seq("2024-01-01", "2024-01-02", "2024-01-03"))
    val m = snap.stateBase.get.manifest
    val bounds = m.manifests.head.partitionBounds.get("date")
    assert(bounds.min === Some("2024-01-01") && bounds.max === Some("2024-01-03"))
  }

  test("fixture 06_schema_dedup: one registry entry serves every split") {
    val snap = open(fixture("06_schema_dedup")).snapshot()
    assert(snap.allFiles.flatMap(_.docMappingRef).distinct.size === 1)
    assert(snap.schemaRegistry.contains(snap.allFiles.head.docMappingRef.get))
  }

  test("a commit onto a copy of a 0.5.4 table checkpoints incrementally over its manifests") {
    withTempDir { tmp =>
      val copy = new File(tmp, "t")
      org.apache.commons.io.FileUtils.copyDirectory(fixture("04_partitioned"), copy)
      TransactionLog.clearCache()
      val log = TransactionTestUtils.logFor(
        copy.getAbsolutePath,
        hadoopConf,
        Map("spark.indextables.checkpoint.interval" -> "2"))
      val v2 = log.startTransaction().commit("WRITE") { s =>
        assert(s.get.version === 1L)
        Seq(add("date=2024-01-04/x.split").copy(partitionValues = Map("date" -> "2024-01-04")))
      }
      assert(v2 === 2L && log.lastCheckpoint().get.version === 2L)
      val m = AvroStateReader.readManifest(log.store, log.logPath, "state-v00000000000000000002")
      assert(m.manifests.head.path === "manifests/manifest-3673dda9.avro")
      assert(m.manifests.size === 2 && m.metadata.isDefined)
      val snap = open(copy).snapshot()
      assert(snap.numFiles === 4 && snap.metadata.partitionColumns === Seq("date"))
      assert(snap.allFiles.take(3).forall(a => snap.docMappingFor(a).isDefined))
    }
  }

  test("manifest paths resolve in the shared, normalised legacy and legacy forms") {
    val log = new Path("/t/_transaction_log")
    val sd = "state-v00000000000000000042"
    assert(AvroStateReader.resolveManifestPath(log, sd, "manifests/manifest-a.avro") ===
      new Path("/t/_transaction_log/manifests/manifest-a.avro"))
    assert(AvroStateReader.resolveManifestPath(log, sd, s"$sd/manifest-a.avro") ===
      new Path(s"/t/_transaction_log/$sd/manifest-a.avro"))
    assert(AvroStateReader.resolveManifestPath(log, sd, "manifest-a.avro") ===
      new Path(s"/t/_transaction_log/$sd/manifest-a.avro"))
  }

  test("the embedded schemas of the fixtures are the ones we write") {
    val dir = fixture("04_partitioned")
    val stateFile = new File(dir, "_transaction_log/state-v00000000000000000001/_manifest.avro")
    val manifestFile = new File(dir, "_transaction_log/manifests/manifest-3673dda9.avro")
    assert(embeddedSchema(stateFile) === AvroStateCodec.StateManifestSchema)
    assert(embeddedSchema(manifestFile) === AvroStateCodec.FileEntrySchema)
  }

  private def embeddedSchema(f: File): org.apache.avro.Schema = {
    val r = new org.apache.avro.file.DataFileReader[AnyRef](
      f,
      new org.apache.avro.generic.GenericDatumReader[AnyRef]())
    try r.getSchema
    finally r.close()
  }
}

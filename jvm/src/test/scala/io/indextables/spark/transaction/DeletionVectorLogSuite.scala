package io.indextables.spark.transaction

import java.io.{ByteArrayInputStream, File}
import java.nio.file.Files

import scala.jdk.CollectionConverters._

import org.apache.avro.file.DataFileStream
import org.apache.avro.generic.{GenericDatumReader, GenericRecord}
import org.apache.hadoop.fs.Path
import org.roaringbitmap.RoaringBitmap
import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.{IndexTablesException, TransactionLogException}
import io.indextables.spark.purge.SplitPurge
import io.indextables.spark.transaction.state.{AvroStateCodec, FileEntry}

/**
 * The `deletionVectors` feature in the log: the descriptor in version files and Avro states,
 * the vector file and its checks, replay of a new vector (a remove and an add of one path), the
 * commit rules, and PURGE of vector files an entry no longer names.
 */
class DeletionVectorLogSuite extends AnyFunSuite with BeforeAndAfterEach {
  import TransactionTestUtils._

  override def beforeEach(): Unit = TransactionLog.clearCache()

  private val dv = DeletionVectorDescriptor("r", "day=d1/a.1234.dv", Some(1), 36, 3L)

  private def open(dir: File, options: Map[String, String] = Map.empty): TransactionLog =
    logFor(dir.getAbsolutePath, hadoopConf, options)

  private val WithVectors = TableFeatures.withFeature(Protocol, TableFeatures.DeletionVectors)

  private def create(log: TransactionLog, protocol: ProtocolAction = WithVectors): Long =
    log.startTransaction().commit("CREATE")(_ => Seq(protocol, metadata()))

  private def commit(log: TransactionLog, actions: Action*): Long =
    log.startTransaction().commit("DELETE")(_ => actions)

  private def bitmap(docs: Int*): RoaringBitmap = RoaringBitmap.bitmapOf(docs: _*)

  /** A vector for `a` written to the table as a DELETE would, and the entry naming it. */
  private def withVector(log: TransactionLog, a: AddAction, docs: Int*): AddAction =
    a.copy(deletionVector =
      Some(DeletionVectorFile.write(log.store, log.tablePath, a.path, bitmap(docs: _*))))

  test("a deletion vector is written in Delta's JSON form on add and remove, and read back") {
    val a = add("day=d1/a.split").copy(numRecords = Some(10L), deletionVector = Some(dv))
    val json = ActionSerde.toJson(a)
    assert(json.contains(
      """"deletionVector":{"storageType":"r","pathOrInlineDv":"day=d1/a.1234.dv",""" +
        """"offset":1,"sizeInBytes":36,"cardinality":3}"""))
    assert(ActionSerde.fromJson(json) === a)
    assert(a.liveRecords === Some(7L))
    assert(a.files === Seq("day=d1/a.split", "day=d1/a.1234.dv"))
    val r = a.removed(5L, dataChange = true)
    assert(r.deletionVector === Some(dv))
    assert(ActionSerde.fromJson(ActionSerde.toJson(r)) === r)
    // Without one, nothing is written: the line stays what readers without the feature read.
    assert(!ActionSerde.toJson(a.copy(deletionVector = None)).contains("deletionVector"))
    val broken = json.replace(""","cardinality":3""", "")
    val e = intercept[TransactionLogException](ActionSerde.fromJson(broken))
    assert(e.getMessage.contains("add.deletionVector") && e.getMessage.contains("cardinality"))
  }

  test("Avro state entries keep their vector in five optional fields 0.5.4's schema skips") {
    val a = add("day=d1/a.split").copy(deletionVector = Some(dv))
    val b = add("day=d1/b.split").copy(deletionVector = Some(dv.copy(offset = None)))
    val c = add("day=d1/c.split").copy(
      companionSourceFiles = Some(Seq("c.parquet")),
      companionSourceFileSizes = Some(Seq(9L)))
    val entries = Seq(FileEntry(a, 1L, 2L), FileEntry(b, 3L, 4L), FileEntry(c, 5L, 6L))
    val bytes = AvroStateCodec.encodeFileEntries(entries, AvroStateCodec.codec("zstd", 3))
    assert(AvroStateCodec.decodeFileEntries(bytes) === entries)

    val stream = new DataFileStream[GenericRecord](
      new ByteArrayInputStream(bytes),
      new GenericDatumReader[GenericRecord]())
    val written =
      try stream.getSchema
      finally stream.close()
    val upstream = AvroStateCodec.FileEntrySchema
    val names = written.getFields.asScala.map(_.name).toList
    assert(names === upstream.getFields.asScala.map(_.name).toList ++ Seq(
      "companionSourceFileSizes",
      "companionDocsInRowOrder",
      "companionSourceDeletionVectors",
      "deletionVectorStorageType",
      "deletionVectorPathOrInlineDv",
      "deletionVectorOffset",
      "deletionVectorSizeInBytes",
      "deletionVectorCardinality"
    ))
    assert(written.getFields.asScala.drop(upstream.getFields.size).map(
      _.getObjectProp("field-id")).toList === 153 +: 159 +: 160 +: (154 to 158).toList)
    val resolving = new DataFileStream[GenericRecord](
      new ByteArrayInputStream(bytes),
      new GenericDatumReader[GenericRecord](written, upstream))
    try assert(resolving.iterator().asScala.map(_.get("path").toString).toList ===
        entries.map(_.add.path))
    finally resolving.close()
    // A vector without its cardinality is refused, naming the entry.
    // A vector without its cardinality is refused, naming the entry.
    val first = new DataFileStream[GenericRecord](
      new ByteArrayInputStream(bytes),
      new GenericDatumReader[GenericRecord]())
    val partial =
      try first.next()
      finally first.close()
    partial.put("deletionVectorCardinality", null)
    val out = new java.io.ByteArrayOutputStream()
    val w = new org.apache.avro.file.DataFileWriter[GenericRecord](
      new org.apache.avro.generic.GenericDatumWriter[GenericRecord](written))
    w.create(written, out)
    w.append(partial)
    w.close()
    val e = intercept[TransactionLogException](AvroStateCodec.decodeFileEntries(out.toByteArray))
    assert(e.getMessage.contains("day=d1/a.split") && e.getMessage.contains("Cardinality"))
  }

  test("a vector file round-trips, and each kind of damage is refused by name") {
    withTempDir { dir =>
      val log = open(dir)
      val docs = bitmap(0, 1, 2, 7, 65535, 65536, 1 << 20)
      docs.add(100000L, 100500L)
      val d = DeletionVectorFile.write(log.store, log.tablePath, "day=d1/a.split", docs)
      assert(d.storageType === "r" && d.offset === Some(1) && d.cardinality === 507L)
      assert(d.pathOrInlineDv.startsWith("day=d1/a.") && d.pathOrInlineDv.endsWith(".dv"))
      val file = new File(dir, d.pathOrInlineDv)
      assert(file.length() === 1 + 4 + d.sizeInBytes + 4)
      assert(DeletionVectorFile.read(log.store, log.tablePath, "day=d1/a.split", d) === docs)

      def refused(desc: DeletionVectorDescriptor, why: String): Unit = {
        val e = intercept[IndexTablesException](
          DeletionVectorFile.read(log.store, log.tablePath, "day=d1/a.split", desc))
        assert(e.getErrorClass === "INDEXTABLES_DELETION_VECTOR_UNREADABLE", e.getMessage)
        assert(e.getSqlState === "XX001")
        assert(e.getMessage.contains(desc.pathOrInlineDv) && e.getMessage.contains("a.split"))
        assert(e.getMessage.contains(why), e.getMessage)
      }
      refused(d.copy(cardinality = 506L), "the log says 506")
      refused(d.copy(storageType = "u"), "storage type 'u'")
      refused(d.copy(sizeInBytes = d.sizeInBytes - 1), "size field")
      refused(d.copy(pathOrInlineDv = "day=d1/gone.dv"), "cannot be read")
      val bytes = Files.readAllBytes(file.toPath)
      bytes(bytes.length - 7) = (bytes(bytes.length - 7) ^ 0x40).toByte
      Files.write(file.toPath, bytes)
      refused(d, "checksum")
      bytes(0) = 2
      Files.write(file.toPath, bytes)
      refused(d, "format version is 2")
      intercept[IndexTablesException](DeletionVectorFile.read(
        log.store,
        log.tablePath,
        "a.split",
        d.copy(pathOrInlineDv = "../outside.dv")))
    }
  }

  test("a new vector replays as the split's entry at its version, from JSON and from states") {
    Seq("json", "avro").foreach { format =>
      withTempDir { dir =>
        val opts = Map("spark.indextables.state.format" -> format)
        val log = open(dir, opts)
        create(log)
        val a = add("day=d1/a.split").copy(numRecords = Some(10L))
        val b = add("day=d1/b.split").copy(numRecords = Some(10L))
        commit(log, a, b) // v1
        val a1 = withVector(log, a, 1, 2)
        commit(log, a.removed(5L, dataChange = true), a1) // v2
        CheckpointWriter.checkpoint(log, log.snapshot(), forceCompaction = false)
        val a2 = withVector(log, a, 1, 2, 3)
        commit(log, a1.removed(6L, dataChange = true), a2) // v3
        CheckpointWriter.checkpoint(log, log.snapshot(), forceCompaction = false)
        TransactionLog.clearCache()
        val now = open(dir, opts).snapshot()
        // A new vector moves its entry to the end, as a remove and an add of a path do.
        assert(now.allFiles === Seq(b, a2), format)
        assert(now.allFiles.last.liveRecords === Some(7L))
        assert(now.tombstones.isEmpty)
        assert(open(dir, opts).snapshotAt(2).allFiles === Seq(b, a1))
        assert(open(dir, opts).snapshotAt(1).allFiles === Seq(a, b))
        assert(now.protocol === WithVectors)
      }
    }
  }

  test("a commit may not add a path before removing it, nor add a vector without the feature") {
    withTempDir { dir =>
      val log = open(dir)
      create(log)
      val a = add("a.split")
      commit(log, a)
      val a1 = a.copy(deletionVector = Some(dv))
      val e = intercept[TransactionLogException](commit(log, a1, a.removed(1L, true)))
      assert(e.getErrorClass === "INDEXTABLES_INVALID_COMMIT")
      assert(e.getMessage.contains("a.split is added before it is removed"))
    }
    withTempDir { dir =>
      val log = open(dir)
      create(log, Protocol)
      val a = add("a.split")
      commit(log, a)
      val e = intercept[TransactionLogException](
        commit(log, a.removed(1L, true), a.copy(deletionVector = Some(dv))))
      assert(e.getMessage.contains("without the deletionVectors feature"))
      // The commit that first writes a vector adds the feature.
      log.startTransaction().commit("DELETE") { s =>
        Seq(
          TableFeatures.withFeature(s.get.protocol, TableFeatures.DeletionVectors),
          a.removed(1L, true),
          a.copy(deletionVector = Some(dv)))
      }
      val p = log.snapshot().protocol
      assert(
        TableFeatures.hasDeletionVectors(p) && p.writerFeatures.get.contains("deletionVectors"))
      assert((p.minReaderVersion, p.minWriterVersion) === ((4, 4)))
      assert(TableFeatures.withFeature(p, TableFeatures.DeletionVectors) eq p)
    }
  }

  test("PURGE deletes a vector file its entry no longer names, after the retention only") {
    withTempDir { dir =>
      val log = open(dir)
      create(log)
      val splitFile = new File(dir, "day=d1/a.split")
      splitFile.getParentFile.mkdirs()
      Files.write(splitFile.toPath, Array[Byte](1))
      val a = add("day=d1/a.split")
      commit(log, a)
      val a1 = withVector(log, a, 1)
      val t1 = System.currentTimeMillis()
      commit(log, a.removed(t1, true), a1)
      val a2 = withVector(log, a, 1, 2)
      val t2 = System.currentTimeMillis()
      commit(log, a1.removed(t2, true), a2)
      val old = new File(dir, a1.deletionVector.get.pathOrInlineDv)
      val live = new File(dir, a2.deletionVector.get.pathOrInlineDv)
      // Both files are old on disk; only the removal time keeps the replaced one.
      Seq(old, live).foreach(_.setLastModified(t1 - 10L * 24 * 3600 * 1000))
      val settings = SplitPurge.Settings(1, Some(10000L), dryRun = false)
      val early = SplitPurge.run(log, settings)
      assert(early.purged.isEmpty && early.orphansFound === 1L && old.isFile)
      val later = SplitPurge.run(log, settings, now = t2 + 2L * 3600 * 1000)
      assert(later.purged.map(_.path) === Seq(a1.deletionVector.get.pathOrInlineDv))
      assert(!old.exists() && live.isFile && splitFile.isFile)
      // Time travel to the version that named it now says so.
      assert(log.snapshotAt(2).allFiles.head.deletionVector === a1.deletionVector)
    }
  }

  test("the vector of a split path resolves below the table root only") {
    val root = new Path("/t")
    intercept[IndexTablesException](TablePaths.resolve(root, "../x.dv", "deletionVector"))
    assert(DeletionVectorFile.newPath("p=1/s.split").matches("p=1/s\\.[0-9a-f-]{36}\\.dv"))
  }
}

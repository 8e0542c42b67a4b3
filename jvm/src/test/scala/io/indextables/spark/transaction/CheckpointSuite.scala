package io.indextables.spark.transaction

import java.io.File
import java.nio.file.Files

import scala.jdk.CollectionConverters._

import org.apache.hadoop.fs.Path
import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.TransactionLogException
import io.indextables.spark.transaction.TransactionTestUtils._
import io.indextables.spark.transaction.state.{AvroStateCodec, AvroStateReader}
import io.indextables.spark.storage.{DelegatingLogStore, LogStore}

/** Writing checkpoints: Avro state (incremental, compaction, bounds), JSON forms, crash safety. */
class CheckpointSuite extends AnyFunSuite with BeforeAndAfterEach {

  override def beforeEach(): Unit = TransactionLog.clearCache()

  private def open(dir: File, options: Map[String, String] = Map.empty): TransactionLog =
    TransactionTestUtils.logFor(dir.getAbsolutePath, hadoopConf, options)

  private def create(log: TransactionLog, partitionColumns: Seq[String] = Nil): Long =
    log.startTransaction().commit("CREATE")(_ =>
      Seq(
        Protocol,
        metadata(Map("docMappingSchema.h1" -> "[]"), partitionColumns)))

  private def append(log: TransactionLog, actions: Action*): Long =
    log.startTransaction().commit("WRITE")(_ => actions)

  private def partAdd(path: String, date: String): AddAction =
    add(path).copy(partitionValues = Map("date" -> date), docMappingRef = Some("h1"))

  private def fresh(dir: File, options: Map[String, String] = Map.empty): Snapshot = {
    TransactionLog.clearCache()
    open(dir, options).snapshot()
  }

  private def versionFile(dir: File, v: Long): File =
    new File(dir, s"_transaction_log/${VersionFiles.fileName(v)}")

  private def stateFile(dir: File, v: Long): File =
    new File(dir, s"_transaction_log/${LastCheckpoint.stateDirName(v)}/_manifest.avro")

  test("an Avro state every checkpoint.interval versions, read back after the version files go") {
    withTempDir { dir =>
      val log = open(dir, Map("spark.indextables.checkpoint.interval" -> "5"))
      create(log)
      (1 to 12).foreach(i => append(log, add(s"f$i")))
      val pointer = log.lastCheckpoint().get
      assert(pointer.version === 10L && pointer.isAvroState && pointer.numFiles === 10L)
      assert(pointer.stateDir === Some("state-v00000000000000000010"))
      assert(stateFile(dir, 5).isFile && stateFile(dir, 10).isFile && !stateFile(dir, 12).exists)
      // Without the version files the checkpoint covers, the table still reads.
      (0 to 10).foreach(v => versionFile(dir, v).delete())
      val s = fresh(dir)
      assert(s.version === 12L && s.allFiles.map(_.path) === (1 to 12).map(i => s"f$i"))
      assert(s.metadata === metadata(Map("docMappingSchema.h1" -> "[]")))
      assert(open(dir).snapshotAt(5).allFiles.size === 5)
      val e = intercept[TransactionLogException](open(dir).snapshotAt(3))
      assert(e.getMessage.contains("retention") && e.getMessage.contains("earliest readable"))
    }
  }

  test("an incremental state reuses the previous manifests and adds one of new entries") {
    withTempDir { dir =>
      val log = open(dir, Map("spark.indextables.checkpoint.interval" -> "2"))
      create(log)
      append(log, add("a"), add("b"))
      append(log, add("c"))
      append(log, add("d"))
      append(log, add("e"))
      val m2 = AvroStateReader.readManifest(log.store, log.logPath, "state-v00000000000000000002")
      val m4 = AvroStateReader.readManifest(log.store, log.logPath, "state-v00000000000000000004")
      assert(m2.manifests.size === 1 && m2.manifests.head.numEntries === 3)
      assert(m4.manifests.map(_.path).take(1) === m2.manifests.map(_.path))
      assert(m4.manifests.size === 2 && m4.manifests(1).numEntries === 2)
      assert(m4.manifests.forall(_.path.startsWith("manifests/manifest-")))
      assert(fresh(dir).allFiles.map(_.path) === Seq("a", "b", "c", "d", "e"))
    }
  }

  test("removes become tombstones, and the tombstone ratio triggers compaction") {
    withTempDir { dir =>
      val opts = Map(
        "spark.indextables.checkpoint.interval" -> "2",
        "spark.indextables.state.compaction.tombstoneThreshold" -> "0.2")
      val log = open(dir, opts)
      create(log)
      append(log, (1 to 10).map(i => add(s"f$i")): _*)
      append(log, add("g"))
      append(log, RemoveAction("f1", Some(1L), dataChange = true))
      append(log, add("h"))
      val m4 = AvroStateReader.readManifest(log.store, log.logPath, "state-v00000000000000000004")
      assert(m4.tombstones === Seq("f1") && m4.manifests.size === 2)
      assert(!fresh(dir).allFiles.exists(_.path == "f1"))
      append(log, (2 to 4).map(i => RemoveAction(s"f$i", Some(1L), dataChange = true)): _*)
      append(log, add("i"))
      val m6 = AvroStateReader.readManifest(log.store, log.logPath, "state-v00000000000000000006")
      assert(m6.tombstones.isEmpty && m6.manifests.size === 1 && m6.numFiles === 9L)
      assert(fresh(dir, opts).allFiles.map(_.path).toSet ===
        ((5 to 10).map(i => s"f$i") ++ Seq("g", "h", "i")).toSet)
    }
  }

  test("a path added again after the state forces compaction, so its new entry wins") {
    withTempDir { dir =>
      val log = open(dir, Map("spark.indextables.checkpoint.interval" -> "2"))
      create(log)
      append(log, add("a"))
      append(log, add("a", size = 7L))
      append(log, add("b"))
      assert(fresh(dir).allFiles.map(f => f.path -> f.size) === Seq("a" -> 7L, "b" -> 100L))
    }
  }

  test("entriesPerManifest splits manifests, laid out by partition, each with its bounds") {
    withTempDir { dir =>
      val log = open(
        dir,
        Map(
          "spark.indextables.checkpoint.interval" -> "1",
          "spark.indextables.state.entriesPerManifest" -> "2"))
      create(log, Seq("date"))
      append(
        log,
        partAdd("a", "2024-01-03"),
        partAdd("b", "2024-01-01"),
        partAdd("c", "2024-01-02"),
        add("n").copy(partitionValues = Map("date" -> null)))
      val m = AvroStateReader.readManifest(log.store, log.logPath, "state-v00000000000000000001")
      assert(m.manifests.map(_.numEntries) === Seq(2L, 2L))
      val b = m.manifests.map(_.partitionBounds.get("date"))
      // Compaction sorts entries by partition value (NULL first): [n, b] and [c, a].
      assert(b.map(x => (x.min, x.max)) === Seq(
        (Some("2024-01-01"), Some("2024-01-01")),
        (Some("2024-01-02"), Some("2024-01-03"))))
      val s = fresh(dir)
      assert(s.allFiles.find(_.path == "n").get.partitionValues === Map("date" -> null))
    }
  }

  test("our Avro files have the fixtures' forms: container magic, codec, schemas, field names") {
    withTempDir { dir =>
      val log = open(dir, Map("spark.indextables.checkpoint.interval" -> "1"))
      create(log)
      append(log, add("a"))
      val ours = Seq(stateFile(dir, 1)) ++
        new File(dir, "_transaction_log/manifests").listFiles().filter(_.getName.endsWith(".avro"))
      ours.foreach { f =>
        val bytes = Files.readAllBytes(f.toPath)
        assert(bytes.take(4).toSeq === Seq('O', 'b', 'j', 1).map(_.toByte))
        assert(codecOf(f) === "zstandard")
      }
      assert(schemaOf(ours.head) === AvroStateCodec.StateManifestSchema)
      assert(schemaOf(ours(1)) === AvroStateCodec.FileEntrySchema)
      interopFixtures.foreach { root =>
        val fx = new File(root, "04_partitioned/_transaction_log")
        assert(schemaOf(ours.head).toString ===
          schemaOf(new File(fx, "state-v00000000000000000001/_manifest.avro")).toString)
        assert(schemaOf(ours(1)).toString ===
          schemaOf(new File(fx, "manifests/manifest-3673dda9.avro")).toString)
        val fxPointer = LastCheckpoint.fromJson(
          Files.readAllBytes(new File(fx, "_last_checkpoint").toPath))
        val ourPointer = new String(
          Files.readAllBytes(new File(dir, "_transaction_log/_last_checkpoint").toPath),
          "UTF-8")
        val fxText =
          new String(Files.readAllBytes(new File(fx, "_last_checkpoint").toPath), "UTF-8")
        assert(fieldNames(ourPointer) === fieldNames(fxText))
        assert(fxPointer.isAvroState)
      }
      // A version file keeps the 01 01 + gzip form.
      val v1 = Files.readAllBytes(versionFile(dir, 1).toPath)
      assert(v1.take(4).toSeq === Seq(1, 1, 0x1f, 0x8b).map(_.toByte))
    }
  }

  test("above the renormalize threshold, refs hashed from reordered JSON merge into one") {
    withTempDir { dir =>
      val log = open(
        dir,
        Map(
          "spark.indextables.checkpoint.interval" -> "2",
          "spark.indextables.state.schema.renormalizeThreshold" -> "1"))
      val a = """[{"name":"x","type":"i64"},{"name":"y","type":"text"}]"""
      val b = """[{"type":"text","name":"y"},{"name":"x","type":"i64"}]"""
      val canonical = SchemaHash.compute(a)
      assert(SchemaHash.compute(b) === canonical)
      log.startTransaction().commit("CREATE")(_ =>
        Seq(
          Protocol,
          metadata(Map(
            "docMappingSchema.legacyA" -> a,
            "docMappingSchema.legacyB" -> b))))
      append(log, add("f1").copy(docMappingRef = Some("legacyA")))
      append(log, add("f2").copy(docMappingRef = Some("legacyB")))
      val s = fresh(dir)
      assert(s.allFiles.flatMap(_.docMappingRef).toSet === Set(canonical))
      assert(s.allFiles.forall(f => s.docMappingFor(f).isDefined))
      val m = AvroStateReader.readManifest(log.store, log.logPath, "state-v00000000000000000002")
      assert(m.schemaRegistry.keySet === Set(canonical))
    }
  }

  test("snappy and uncompressed states read back") {
    Seq("snappy", "none").foreach { codec =>
      withTempDir { dir =>
        val log = open(
          dir,
          Map(
            "spark.indextables.checkpoint.interval" -> "1",
            "spark.indextables.state.compression" -> codec))
        create(log)
        append(log, add("a"))
        assert(codecOf(stateFile(dir, 1)) === (if (codec == "none") "null" else codec))
        assert(fresh(dir).allFiles.map(_.path) === Seq("a"))
      }
    }
  }

  test("JSON checkpoints, single-file and multi-part, read back") {
    Seq("100", "2").foreach { perPart =>
      withTempDir { dir =>
        val opts = Map(
          "spark.indextables.checkpoint.interval" -> "3",
          "spark.indextables.state.format" -> "json",
          "spark.indextables.checkpoint.actionsPerPart" -> perPart)
        val log = open(dir, opts)
        create(log)
        (1 to 4).foreach(i => append(log, add(s"f$i")))
        val pointer = log.lastCheckpoint().get
        assert(pointer.version === 3L)
        assert(pointer.isMultiPart === (perPart == "2"))
        (0 to 3).foreach(v => versionFile(dir, v).delete())
        val s = fresh(dir)
        assert(s.version === 4L && s.allFiles.map(_.path) === (1 to 4).map(i => s"f$i"))
        assert(s.metadata.configuration.contains("docMappingSchema.h1"))
      }
    }
  }

  test("a checkpoint interrupted before _last_checkpoint leaves the table readable") {
    withTempDir { dir =>
      val opts = Map("spark.indextables.checkpoint.interval" -> "2")
      val log = open(dir, opts)
      create(log)
      append(log, add("a"))
      append(log, add("b"))
      append(log, add("c"))
      // Interrupt the checkpoint of version 3 at each of its writes in turn: the new manifest,
      // the state manifest, and the pointer.
      Seq(1, 2, 3).foreach { failAt =>
        val failing = new FailingStore(log.store, failAt)
        intercept[java.io.IOException] {
          CheckpointWriter.checkpointWith(failing, log, log.snapshot(), forceCompaction = false)
        }
        val s = fresh(dir)
        assert(s.version === 3L && s.allFiles.map(_.path) === Seq("a", "b", "c"))
      }
      assert(open(dir).lastCheckpoint().get.version === 2L)
      append(open(dir, opts), add("d"))
      assert(open(dir).lastCheckpoint().get.version === 4L)
      assert(fresh(dir).allFiles.map(_.path) === Seq("a", "b", "c", "d"))
    }
  }

  test("a pointer to a missing state is an error naming the missing file") {
    withTempDir { dir =>
      val log = open(dir, Map("spark.indextables.checkpoint.interval" -> "1"))
      create(log)
      append(log, add("a"))
      assert(stateFile(dir, 1).delete())
      val e = intercept[TransactionLogException](fresh(dir))
      assert(e.getMessage.contains(stateFile(dir, 1).getAbsolutePath))
    }
  }

  test("a state from a future protocol is refused with an error naming the file") {
    withTempDir { dir =>
      val log = open(dir, Map("spark.indextables.checkpoint.interval" -> "1"))
      create(log)
      append(log, add("a"))
      val f = stateFile(dir, 1)
      val m = AvroStateCodec.decodeStateManifest(Files.readAllBytes(f.toPath))
      Files.write(
        f.toPath,
        AvroStateCodec.encodeStateManifest(
          m.copy(protocolVersion = 9),
          AvroStateCodec.codec("zstd", 3)))
      val e = intercept[TransactionLogException](fresh(dir))
      assert(e.getMessage.contains("version 9") && e.getMessage.contains(f.getAbsolutePath))
    }
  }

  private def fieldNames(json: String): Seq[String] = {
    import scala.jdk.CollectionConverters._
    new com.fasterxml.jackson.databind.ObjectMapper().readTree(json).fieldNames().asScala.toSeq
  }

  private def reader(f: File) = new org.apache.avro.file.DataFileReader[AnyRef](
    f,
    new org.apache.avro.generic.GenericDatumReader[AnyRef]())

  private def schemaOf(f: File): org.apache.avro.Schema = {
    val r = reader(f)
    try r.getSchema
    finally r.close()
  }

  private def codecOf(f: File): String = {
    val r = reader(f)
    try Option(r.getMetaString("avro.codec")).getOrElse("null")
    finally r.close()
  }

  /** A store whose `failAt`-th write (put or overwrite) fails, as a crash there would. */
  private class FailingStore(inner: LogStore, failAt: Int)
      extends DelegatingLogStore(inner) {
    private var writes = 0
    private def tick(path: Path): Unit = {
      writes += 1
      if (writes == failAt) throw new java.io.IOException(s"injected failure writing $path")
    }
    override def putIfAbsent(path: Path, bytes: Array[Byte]): Boolean = {
      tick(path); inner.putIfAbsent(path, bytes)
    }
    override def overwrite(path: Path, bytes: Array[Byte]): Unit = {
      tick(path); inner.overwrite(path, bytes)
    }
  }

  test("a read loads only the manifests whose partition bounds it can match") {
    withTempDir { dir =>
      val log = open(
        dir,
        Map(
          "spark.indextables.checkpoint.interval" -> "3",
          "spark.indextables.state.entriesPerManifest" -> "2"))
      create(log, Seq("date"))
      append(log, partAdd("a1", "2024-01-01"), partAdd("a2", "2024-01-01"))
      append(log, partAdd("b1", "2024-01-02"), partAdd("b2", "2024-01-02"))
      append(log, partAdd("c1", "2024-01-03"), partAdd("c2", "2024-01-03")) // state-v3
      append(
        log,
        partAdd("a3", "2024-01-01"),
        RemoveAction("b1", Some(1L), dataChange = true),
        RemoveAction("c2", Some(1L), dataChange = true))
      val m = AvroStateReader.readManifest(log.store, log.logPath, "state-v00000000000000000003")
      val janSecond = m.manifests.filter(_.partitionBounds.get("date").max.contains("2024-01-02"))
      assert(janSecond.size === 1)
      // Without the 2024-01-02 manifest on disk, other partitions still read.
      new File(new File(dir, "_transaction_log"), janSecond.head.path).delete()
      def onlyDate(d: String): Snapshot.ManifestFilter =
        b => b("date").min.forall(_ <= d) && b("date").max.forall(_ >= d)
      val s = fresh(dir)
      assert(!s.filesLoaded)
      // The tail's adds come whatever their partition; its removes apply.
      assert(s.filesMatching(onlyDate("2024-01-01")).map(_.path).toSet === Set("a1", "a2", "a3"))
      assert(s.filesMatching(onlyDate("2024-01-03")).map(_.path).toSet === Set("c1", "a3"))
      // Entries are also filtered by their own partition values as they are decoded (the
      // tail's adds come regardless).
      val seen = java.util.concurrent.ConcurrentHashMap.newKeySet[Map[String, String]]()
      val jan3 = s.filesMatching(
        b => !b("date").max.contains("2024-01-02"),
        pv => { seen.add(pv); pv("date") == "2024-01-03" })
      assert(jan3.map(_.path).toSet === Set("c1", "a3"))
      assert(seen.asScala.map(_("date")) === Set("2024-01-01", "2024-01-03"))
      assert(!s.filesLoaded)
      val e = intercept[TransactionLogException](s.filesMatching(onlyDate("2024-01-02")))
      assert(e.getMessage.contains(janSecond.head.path))
    }
  }

  test(
    "state entries keep the version that added them, through incremental writes and compaction") {
    withTempDir { dir =>
      val log = open(dir, Map("spark.indextables.checkpoint.interval" -> "2"))
      create(log)
      append(log, add("a")) // v1
      append(log, add("b")) // v2: state-v2 holds a@1, b@2
      append(log, add("c")) // v3
      append(log, add("d")) // v4: incremental, new manifest holds c@3, d@4
      def versions(v: Long): Map[String, Long] = {
        val st = AvroStateReader.read(log.store, log.logPath, LastCheckpoint.stateDirName(v), 1)
        st.live.map(e => e.add.path -> e.addedAtVersion).toMap
      }
      assert(versions(2) === Map("a" -> 1L, "b" -> 2L))
      assert(versions(4) === Map("a" -> 1L, "b" -> 2L, "c" -> 3L, "d" -> 4L))
      val m4 = AvroStateReader.readManifest(log.store, log.logPath, LastCheckpoint.stateDirName(4))
      assert(m4.manifests.map(x => (x.minAddedAtVersion, x.maxAddedAtVersion)) ===
        Seq((1L, 2L), (3L, 4L)))
      append(log, add("e")) // v5
      CheckpointWriter.checkpoint(log, fresh(dir), forceCompaction = true)
      assert(versions(5) === Map("a" -> 1L, "b" -> 2L, "c" -> 3L, "d" -> 4L, "e" -> 5L))
    }
  }

  test("a state write that fails on storage is retried with backoff, per the state.retry keys") {
    withTempDir { dir =>
      val opts = Map(
        "spark.indextables.checkpoint.enabled" -> "false",
        "spark.indextables.state.retry.baseDelayMs" -> "1")
      val log = open(dir, opts)
      create(log)
      append(log, add("a"))
      append(log, add("b"))
      // The first write (the new manifest) fails once; the second attempt succeeds.
      val cp = CheckpointWriter.checkpointWithRetries(
        new FailingStore(log.store, 1),
        log,
        log.snapshot(),
        forceCompaction = false)
      assert(cp.version === 2L && open(dir).lastCheckpoint().map(_.version) === Some(2L))
      assert(fresh(dir).allFiles.map(_.path) === Seq("a", "b"))
      val once = open(dir, opts + ("spark.indextables.state.retry.maxAttempts" -> "1"))
      append(once, add("c"))
      intercept[java.io.IOException] {
        CheckpointWriter.checkpointWithRetries(
          new FailingStore(once.store, 1),
          once,
          once.snapshot(),
          forceCompaction = false)
      }
      assert(open(dir).lastCheckpoint().map(_.version) === Some(2L))
      assert(fresh(dir).allFiles.map(_.path) === Seq("a", "b", "c"))
    }
  }

  test("write options with lower-cased keys (as DataFrame options arrive) still apply") {
    withTempDir { dir =>
      val log = open(
        dir,
        Map(
          "spark.indextables.checkpoint.interval" -> "1",
          "spark.indextables.state.entriespermanifest" -> "1"))
      create(log)
      append(log, add("a"), add("b"), add("c"))
      val m = AvroStateReader.readManifest(log.store, log.logPath, LastCheckpoint.stateDirName(1))
      assert(m.manifests.size === 3)
    }
  }
}

package io.indextables.spark.transaction

import java.io.File
import java.nio.file.Files

import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.config.{IndexTablesConf, IndexTablesOptions}
import io.indextables.spark.exceptions.{ConcurrentCommitException, IndexTablesException, TransactionLogException}
import io.indextables.spark.storage.LocalLogStore

class TransactionLogSuite extends AnyFunSuite with BeforeAndAfterEach {
  import TransactionTestUtils._

  override def beforeEach(): Unit = TransactionLog.clearCache()

  private def open(dir: File, options: Map[String, String] = Map.empty): TransactionLog =
    TransactionTestUtils.logFor(dir.getAbsolutePath, hadoopConf, options)

  private def create(log: TransactionLog, meta: MetadataAction = metadata()): Long =
    log.startTransaction().commit("CREATE") { s =>
      assert(s.isEmpty)
      Seq(Protocol, meta)
    }

  private def append(log: TransactionLog, actions: Action*): Long =
    log.startTransaction().commit("WRITE")(_ => actions)

  test("a missing table does not exist, and reading it names the path") {
    withTempDir { dir =>
      val log = open(dir)
      assert(!log.exists)
      assert(log.latestVersion === None)
      val e = intercept[TransactionLogException](log.snapshot())
      assert(e.getMessage.contains(log.tablePath.toString))
      assert(log.logPath.toString === log.tablePath.toString + "/_transaction_log")
    }
  }

  test("create, append and remove: replay keeps live adds and tombstones") {
    withTempDir { dir =>
      val log = open(dir)
      assert(create(log) === 0L)
      assert(log.exists)
      assert(append(log, add("a"), add("b")) === 1L)
      assert(append(log, add("a", size = 7L), add("c")) === 2L)
      assert(append(log, RemoveAction("b", Some(9L), dataChange = true)) === 3L)
      assert(log.latestVersion === Some(3L))

      // A fresh handle, so that replay starts from the files, not from the commit cache.
      TransactionLog.clearCache()
      val s = open(dir).snapshot()
      assert(s.version === 3L)
      assert(s.protocol === Protocol)
      assert(s.metadata === metadata())
      assert(s.allFiles.map(f => f.path -> f.size) === Seq("a" -> 7L, "c" -> 100L))
      assert(s.tombstones.map(_.path) === Seq("b"))

      assert(open(dir).snapshotAt(1).allFiles.map(_.path) === Seq("a", "b"))
      assert(open(dir).snapshotAt(0).allFiles.isEmpty)
      assert(append(open(dir), add("b")) === 4L)
      val again = open(dir).snapshot()
      assert(again.allFiles.map(_.path).toSet === Set("a", "b", "c"))
      assert(again.tombstones.isEmpty)
    }
  }

  test(
    "handles share a table's snapshot per path and file-system options, whatever their settings") {
    withTempDir { dir =>
      create(open(dir))
      val first = open(dir).snapshot()
      val byUri = TransactionTestUtils.logFor(
        "file:" + dir.getAbsolutePath,
        hadoopConf,
        Map(IndexTablesConf.RetryMaxAttempts.key -> "3", "__indextables.indexquery.key" -> "k"))
      assert(byUri.settings.retryMaxAttempts === 3)
      assert(byUri.snapshot() eq first)
      val otherFs = TransactionLog.forTable(
        dir.getAbsolutePath,
        hadoopConf,
        IndexTablesOptions.Defaults.logSettings,
        Map("fs.file.impl.disable.cache" -> "true"))
      assert(otherFs.snapshot() ne first)
      assert(otherFs.snapshot().version === first.version)
    }
  }

  test("log errors belong to the one exception family and carry a stable error class") {
    withTempDir { dir =>
      val e = intercept[IndexTablesException](open(dir).snapshot())
      assert(e.isInstanceOf[TransactionLogException])
      assert(e.getErrorClass === "INDEXTABLES_TABLE_NOT_FOUND")
      assert(e.getMessage.startsWith("[INDEXTABLES_TABLE_NOT_FOUND] "), e.getMessage)
      assert(e.getMessage.contains(dir.getAbsolutePath), e.getMessage)
      // A SparkThrowable, so Spark and PySpark report its class and SQLSTATE.
      val spark: org.apache.spark.SparkThrowable = e
      assert(spark.getErrorClass === "INDEXTABLES_TABLE_NOT_FOUND")
      assert(spark.getSqlState === "42P01" && !spark.isInternalError)
    }
  }

  test("snapshotAt a missing version names the table and the version") {
    withTempDir { dir =>
      val log = open(dir)
      create(log)
      val e = intercept[TransactionLogException](log.snapshotAt(5))
      assert(e.getMessage.contains(log.tablePath.toString) && e.getMessage.contains("Version 5"))
    }
  }

  test("a reader refuses a table whose minReaderVersion is above 4, naming both versions") {
    withTempDir { dir =>
      val log = open(dir)
      // Written as a future IndexTables would: our own writer refuses protocol 5.
      LocalLogStore.putIfAbsent(
        VersionFiles.path(log.logPath, 0),
        VersionFiles.encode(Seq(ProtocolAction(5, 5), metadata()), compressed = true))
      val e = intercept[TransactionLogException](open(dir).snapshot())
      assert(e.getMessage.contains(log.tablePath.toString))
      assert(e.getMessage.contains("version 5") && e.getMessage.contains("up to 4"))
    }
  }

  test("a writer refuses to commit a protocol whose minWriterVersion is above 4") {
    withTempDir { dir =>
      val e = intercept[TransactionLogException] {
        open(dir).startTransaction().commit("CREATE")(_ => Seq(ProtocolAction(4, 5), metadata()))
      }
      assert(e.getMessage.contains("writer protocol version 5"))
      assert(!open(dir).exists)
    }
  }

  test("the first commit of a new table must hold protocol and metadata") {
    withTempDir { dir =>
      val e = intercept[TransactionLogException] {
        open(dir).startTransaction().commit("WRITE")(_ => Seq(add("a")))
      }
      assert(e.getMessage.contains("WRITE") && e.getMessage.contains(dir.getName))
      assert(!open(dir).exists)
    }
  }

  test("docMappingFor prefers inline JSON, then the schema registry") {
    withTempDir { dir =>
      val schema = """[{"name":"title","type":"text"}]"""
      val hash = SchemaHash.compute(schema)
      val log = open(dir)
      create(log, metadata(configuration = Map(SchemaHash.registryKey(hash) -> schema, "x" -> "y")))
      append(
        log,
        add("a").copy(docMappingRef = Some(hash)),
        add("b").copy(docMappingJson = Some("[]")),
        add("c").copy(docMappingRef = Some("unknown")))
      val s = log.snapshot()
      assert(s.schemaRegistry === Map(hash -> schema))
      val byPath = s.allFiles.map(a => a.path -> s.docMappingFor(a)).toMap
      assert(byPath === Map("a" -> Some(schema), "b" -> Some("[]"), "c" -> None))
    }
  }

  test("compression option selects the version-file form") {
    withTempDir { dir =>
      create(open(dir, Map(IndexTablesConf.TransactionCompression.key -> "false")))
      val f = new File(dir, "_transaction_log/00000000000000000000.json")
      assert(Files.readAllBytes(f.toPath).head === '{'.toByte)
      append(open(dir), add("a"))
      val g = new File(dir, "_transaction_log/00000000000000000001.json")
      assert(Files.readAllBytes(g.toPath).take(2).toSeq === Seq[Byte](1, 1))
      assert(open(dir).snapshot().allFiles.map(_.path) === Seq("a"))
    }
  }

  test("a conflicting commit re-reads the new state and rebuilds its actions") {
    withTempDir { dir =>
      val log = open(dir)
      create(log)
      var seen = Vector.empty[Long]
      val v = log.startTransaction().commit("WRITE") { s =>
        seen :+= s.get.version
        // Another writer takes the next version while we build ours, once.
        if (seen.size == 1) {
          TransactionLog.clearCache()
          append(open(dir), add("other"))
        }
        Seq(add(s"mine-${seen.size}"))
      }
      assert(seen === Vector(0L, 1L))
      assert(v === 2L)
      assert(log.snapshot().allFiles.map(_.path) === Seq("other", "mine-2"))
    }
  }

  test("after maxAttempts conflicts the error names the table and the operation") {
    withTempDir { dir =>
      val options = Map(
        IndexTablesConf.RetryMaxAttempts.key -> "2",
        IndexTablesConf.RetryBaseDelayMs.key -> "1")
      val log = open(dir, options)
      create(log)
      var n = 0
      val e = intercept[ConcurrentCommitException] {
        log.startTransaction().commit("OPTIMIZE") { _ =>
          n += 1
          TransactionLog.clearCache()
          append(open(dir), add(s"other-$n"))
          Seq(add("mine"))
        }
      }
      assert(n === 2)
      assert(e.getMessage.contains("OPTIMIZE") && e.getMessage.contains(log.tablePath.toString))
    }
  }

  test("a corrupt version file in the log is reported with its path") {
    withTempDir { dir =>
      val log = open(dir)
      create(log)
      val f = new File(dir, "_transaction_log/00000000000000000001.json")
      Files.write(f.toPath, Array[Byte](1, 1, 0x1f, 0x8b.toByte, 8, 0))
      TransactionLog.clearCache()
      val e = intercept[TransactionLogException](open(dir).snapshot())
      assert(e.getMessage.contains("00000000000000000001.json"))
    }
  }

  test("0.5.4 fixtures: version 0 replays from JSON and the latest version from the state") {
    val root = interopFixtures.getOrElse(cancel("../shared/data/interop is absent"))
    val log = open(new File(root, "04_partitioned"))
    assert(log.exists)
    val v0 = log.snapshotAt(0)
    assert(v0.metadata.partitionColumns === Seq("date") && v0.allFiles.isEmpty)
    assert(log.latestVersion === Some(1L))
    assert(log.snapshot().allFiles.size === 3)
  }
}

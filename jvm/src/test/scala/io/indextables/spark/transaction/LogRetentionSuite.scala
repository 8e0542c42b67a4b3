package io.indextables.spark.transaction

import java.io.File

import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.transaction.TransactionTestUtils._

/** Retention of version files and states, and garbage collection of orphaned manifests. */
class LogRetentionSuite extends AnyFunSuite with BeforeAndAfterEach {

  override def beforeEach(): Unit = TransactionLog.clearCache()

  private def open(dir: File, options: Map[String, String]): TransactionLog =
    TransactionTestUtils.logFor(dir.getAbsolutePath, hadoopConf, options)

  private def build(dir: File, options: Map[String, String], commits: Int): TransactionLog = {
    val log = open(dir, options)
    log.startTransaction().commit("CREATE")(_ => Seq(Protocol, metadata()))
    (1 to commits).foreach { i =>
      log.startTransaction().commit("WRITE") { _ =>
        // Every third commit removes an earlier file, so states reference different manifests.
        Seq(add(s"f$i")) ++ (if (i % 3 == 0) Seq(RemoveAction(s"f${i - 1}", Some(1L), true))
                             else Nil)
      }
    }
    log
  }

  private def names(dir: File, sub: String = ""): Set[String] =
    Option(new File(dir, "_transaction_log/" + sub).list()).map(_.toSet).getOrElse(Set.empty)

  test("young files are all kept under the default retention") {
    withTempDir { dir =>
      val log = build(dir, Map("spark.indextables.checkpoint.interval" -> "2"), 8)
      val r = LogRetention.cleanup(log)
      assert(r === LogRetention.Result(Nil, Nil, Nil))
      assert((0 to 8).forall(v => names(dir).contains(VersionFiles.fileName(v))))
    }
  }

  test("old version files, states and orphaned manifests go; never past the checkpoint") {
    withTempDir { dir =>
      val opts = Map(
        "spark.indextables.checkpoint.interval" -> "2",
        "spark.indextables.state.compaction.maxManifests" -> "2",
        "spark.indextables.purge.txLogRetentionHours" -> "0",
        "spark.indextables.state.retention.hours" -> "0",
        "spark.indextables.state.retention.versions" -> "1",
        "spark.indextables.state.gc.minManifestAgeHours" -> "0"
      )
      val log = build(dir, opts, 9)
      val expectedFiles = open(dir, Map.empty).snapshot().allFiles.map(_.path)
      LogRetention.cleanup(log, now = System.currentTimeMillis() + 60000L)
      // Versions 8 (the checkpoint) and 9 stay; only state-v8 stays.
      assert(names(dir).filter(_.endsWith(".json")) ===
        Set(VersionFiles.fileName(8), VersionFiles.fileName(9)))
      assert(names(dir).filter(_.startsWith("state-v")) === Set(LastCheckpoint.stateDirName(8)))
      // The commit records of deleted versions go with them.
      assert(names(dir, CommitInfo.DirName).filter(_.endsWith(".json")) ===
        Set(VersionFiles.fileName(8), VersionFiles.fileName(9)))
      val referenced = state.AvroStateReader
        .readManifest(log.store, log.logPath, LastCheckpoint.stateDirName(8))
        .manifests.map(_.path.stripPrefix("manifests/")).toSet
      assert(names(dir, "manifests").filter(_.endsWith(".avro")) === referenced)
      TransactionLog.clearCache()
      assert(open(dir, Map.empty).snapshot().allFiles.map(_.path) === expectedFiles)
      assert(open(dir, Map.empty).snapshotAt(8).version === 8L)
    }
  }
}

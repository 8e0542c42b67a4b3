package io.indextables.spark.transaction

import java.io.File
import java.nio.file.Files

import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.transaction.TransactionTestUtils._

/** Each commit's operation and parameters, recorded beside its version file. */
class CommitInfoSuite extends AnyFunSuite with BeforeAndAfterEach {

  override def beforeEach(): Unit = TransactionLog.clearCache()

  test("a commit records its operation and parameters; the version file holds only actions") {
    withTempDir { dir =>
      val log = logFor(dir.getAbsolutePath, hadoopConf, Map.empty)
      log.startTransaction().commit("WRITE", Map("mode" -> "Append"))(_ =>
        Seq(Protocol, metadata(), add("a")))
      log.startTransaction().commit(
        "REPLACE WHERE",
        Map("mode" -> "Overwrite", "predicate" -> "day = '2024-01-02'")) { _ =>
        Seq(RemoveAction("a", Some(1L), dataChange = true), add("b"))
      }
      val info = log.commitInfo(1L).get
      assert(info.operation === "REPLACE WHERE")
      assert(info.parameters === Map("mode" -> "Overwrite", "predicate" -> "day = '2024-01-02'"))
      assert(info.timestamp > 0L)
      assert(log.commitInfo(0L).map(_.parameters) === Some(Map("mode" -> "Append")))
      // Other implementations read the version file strictly: it holds the protocol's actions.
      assert(log.actionsOf(1L).map(_.getClass.getSimpleName).toSet ===
        Set("RemoveAction", "AddAction"))
    }
  }

  test("a version without a record, or with a damaged one, has none") {
    withTempDir { dir =>
      val log = logFor(dir.getAbsolutePath, hadoopConf, Map.empty)
      log.startTransaction().commit("WRITE")(_ => Seq(Protocol, metadata(), add("a")))
      val record = new File(
        dir,
        s"_transaction_log/${CommitInfo.DirName}/" +
          VersionFiles.fileName(0))
      assert(record.delete())
      assert(log.commitInfo(0L) === None)
      Files.write(record.toPath, "{not json".getBytes("UTF-8"))
      assert(log.commitInfo(0L) === None)
      assert(log.commitInfo(5L) === None)
    }
  }
}

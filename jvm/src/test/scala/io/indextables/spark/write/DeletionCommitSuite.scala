package io.indextables.spark.write

import java.io.File

import org.roaringbitmap.RoaringBitmap
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.transaction.TransactionTestUtils._
import io.indextables.spark.transaction._

/**
 * The commit of a row-level change against concurrent commits: a split another commit removed
 * or gave a new vector since the statement read it fails the commit (nothing resurrected,
 * nothing lost, no vector file left behind); appends since then commit beside it.
 */
class DeletionCommitSuite extends AnyFunSuite {

  private def split(path: String) =
    AddAction(path, Map.empty, 100L, 1L, dataChange = true, numRecords = Some(10L))

  private def table(dir: File, files: AddAction*): TransactionLog = {
    TransactionLog.clearCache()
    val log = logFor(dir.getAbsolutePath, hadoopConf, Map.empty)
    log.startTransaction().commit("CREATE")(_ => Seq(Protocol, metadata()) ++ files)
    log
  }

  private def docs(ids: Int*) = RoaringBitmap.bitmapOf(ids: _*)

  private def vectorFiles(dir: File): Seq[String] =
    Option(dir.listFiles()).toSeq.flatten.map(_.getName).filter(_.endsWith(".dv")).sorted

  private def delete(log: TransactionLog, base: Snapshot, deletes: (String, RoaringBitmap)*) =
    DeletionCommit.commit(log, base, "t", "DELETE", Map.empty, deletes.toMap)

  test("deletes become vectors, OR'ed with the split's old one; a fully deleted split goes") {
    withTempDir { dir =>
      val log = table(dir, split("a.split"), split("b.split"))
      val first = delete(log, log.snapshot(), "a.split" -> docs(1, 2))
      assert((first.deletedRows, first.vectorsAdded, first.removedFiles) == ((2L, 1L, 1L)))
      val again =
        delete(log, log.snapshot(), "a.split" -> docs(2, 3), "b.split" -> docs(0 to 9: _*))
      assert(again.deletedRows == 11L) // doc 2 was deleted already
      val live = log.snapshot().allFiles
      assert(live.map(_.path) == Seq("a.split"))
      assert(live.head.deletionVector.get.cardinality == 3L && live.head.liveRecords.contains(7L))
      assert(DeletionVectorFile.read(
        log.tableStore,
        log.tablePath,
        "a.split",
        live.head.deletionVector.get) == docs(1, 2, 3))
      // Nothing new to delete: no commit.
      assert(delete(log, log.snapshot(), "a.split" -> docs(1)).version.isEmpty)
      intercept[IndexTablesException](delete(log, log.snapshot(), "a.split" -> docs(10)))
    }
  }

  test("a split another DELETE changed since the read fails the commit; its files are removed") {
    withTempDir { dir =>
      val log = table(dir, split("a.split"), split("b.split"))
      val base = log.snapshot()
      delete(log, log.snapshot(), "a.split" -> docs(5)) // the concurrent DELETE
      val vectors = vectorFiles(dir)
      val e = intercept[IndexTablesException](delete(log, base, "a.split" -> docs(1)))
      assert(e.getErrorClass == "INDEXTABLES_CONCURRENT_COMMIT")
      assert(e.getMessage.contains("deleted rows from split a.split"), e.getMessage)
      assert(vectorFiles(dir) == vectors, "the failed commit's vector file is deleted")
      // Doc 5 stays deleted and doc 1 stays live: nothing resurrected, nothing lost.
      val a = log.snapshot().allFiles.find(_.path == "a.split").get
      assert(DeletionVectorFile.read(
        log.tableStore,
        log.tablePath,
        "a.split",
        a.deletionVector.get) == docs(5))
    }
  }

  test("a split a MERGE SPLITS or overwrite removed since the read fails the commit") {
    withTempDir { dir =>
      val a = split("a.split")
      val log = table(dir, a, split("b.split"))
      val base = log.snapshot()
      log.startTransaction().commit("MERGE SPLITS") { _ =>
        Seq(a.removed(5L, dataChange = false), split("m.split"))
      }
      val e = intercept[IndexTablesException](delete(log, base, "a.split" -> docs(1)))
      assert(e.getMessage.contains("removed split a.split"), e.getMessage)
      assert(vectorFiles(dir).isEmpty)
    }
  }

  test("an append since the read commits beside the DELETE") {
    withTempDir { dir =>
      val log = table(dir, split("a.split"))
      val base = log.snapshot()
      log.startTransaction().commit("WRITE")(_ => Seq(split("c.split")))
      assert(delete(log, base, "a.split" -> docs(0)).version.contains(2L))
      assert(log.snapshot().allFiles.map(_.path).toSet == Set("a.split", "c.split"))
    }
  }
}

package io.indextables.spark.transaction

import java.io.File

import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.transaction.TransactionTestUtils._

/**
 * A streaming query's latest batch in the log (Delta's SetTransaction, kept in the metadata's
 * configuration): recorded by the version that commits the batch, found again after
 * checkpoints and log retention, and kept by commits that are not the stream's.
 */
class StreamingTxnSuite extends AnyFunSuite with BeforeAndAfterEach {

  override def beforeEach(): Unit = TransactionLog.clearCache()

  private val query = "6f1c2a9e-0000-4000-8000-000000000001"

  private def open(dir: File, options: Map[String, String] = Map.empty): TransactionLog =
    TransactionTestUtils.logFor(dir.getAbsolutePath, hadoopConf, options)

  /** One streaming batch's version: its split and the metadata recording the batch. */
  private def commitBatch(log: TransactionLog, epoch: Long): Long =
    log.startTransaction().commit("STREAMING UPDATE") { current =>
      val txn = StreamingTxn(query, epoch)
      current match {
        case None => Seq(Protocol, txn.recordIn(metadata()), add(s"b$epoch"))
        case Some(snap) => Seq(txn.recordIn(snap.metadata), add(s"b$epoch"))
      }
    }

  private def fresh(dir: File, options: Map[String, String] = Map.empty): Option[Snapshot] = {
    TransactionLog.clearCache()
    open(dir, options).latestSnapshotOption()
  }

  test("a batch at or below the recorded epoch is committed; a later one is not") {
    withTempDir { dir =>
      val log = open(dir)
      assert(!StreamingTxn(query, 0).committedIn(log.latestSnapshotOption()))
      (0L to 2L).foreach(commitBatch(log, _))
      val snap = fresh(dir)
      assert(StreamingTxn.recordedEpoch(snap, query) === Some(2L))
      assert((0L to 2L).forall(e => StreamingTxn(query, e).committedIn(snap)))
      assert(!StreamingTxn(query, 3).committedIn(snap))
      assert(!StreamingTxn("another-query", 0).committedIn(snap))
      assert(StreamingTxn.all(snap.get.metadata) === Map(query -> 2L))
    }
  }

  Seq("avro", "json").foreach { format =>
    test(s"the record outlives the version files a $format checkpoint covers") {
      withTempDir { dir =>
        val options = Map(
          "spark.indextables.checkpoint.interval" -> "3",
          "spark.indextables.state.format" -> format)
        val log = open(dir, options)
        (0L to 7L).foreach(commitBatch(log, _))
        val checkpoint = log.lastCheckpointVersion.get
        assert(checkpoint === 6L)
        (0L to checkpoint).foreach { v =>
          new File(dir, s"_transaction_log/${VersionFiles.fileName(v)}").delete()
        }
        assert(StreamingTxn.recordedEpoch(fresh(dir, options), query) === Some(7L))
        // The checkpoint alone, the version after it gone too.
        new File(dir, s"_transaction_log/${VersionFiles.fileName(7)}").delete()
        assert(StreamingTxn.recordedEpoch(fresh(dir, options), query) === Some(6L))
      }
    }
  }

  test("commits that copy the metadata keep every query's record") {
    withTempDir { dir =>
      val log = open(dir)
      commitBatch(log, 4)
      log.startTransaction().commit("SET TBLPROPERTIES") { current =>
        val m = current.get.metadata
        Seq(m.copy(configuration = m.configuration + ("owner" -> "logs-team")))
      }
      val snap = fresh(dir)
      assert(StreamingTxn.recordedEpoch(snap, query) === Some(4L))
      assert(snap.get.metadata.configuration.get("owner") === Some("logs-team"))
    }
  }
}

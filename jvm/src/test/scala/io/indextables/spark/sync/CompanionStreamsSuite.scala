package io.indextables.spark.sync

import java.util.concurrent.{CountDownLatch, TimeUnit}
import java.util.concurrent.atomic.AtomicInteger

import org.apache.spark.SparkException
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.IndexTablesException

/** The stream loop itself: its stops, its retries, its one-stream-per-index rule. */
class CompanionStreamsSuite extends AnyFunSuite {

  private def result(status: String, version: Option[Long]) =
    SyncResult(status, "/i", "/s", 0, 0, 0, 0L, 0L, version, version, status)

  /** Runs a stream on a thread of its own; returns it and what it ended with. */
  private def start(index: String, intervalMs: Long, maxErrors: Int)(sync: Int => SyncResult)
      : (Thread, () => Either[Throwable, Seq[SyncResult]]) = {
    val calls = new AtomicInteger()
    @volatile var outcome: Either[Throwable, Seq[SyncResult]] = null
    val t = new Thread(() =>
      outcome =
        try Right(CompanionStreams.run(index, intervalMs, maxErrors, () => false)(() =>
            sync(calls.incrementAndGet())))
        catch { case e: Throwable => Left(e) })
    t.setDaemon(true)
    t.start()
    (t, () => outcome)
  }

  test("a stream syncs every interval until stopped, and returns the syncs that committed") {
    val synced = new CountDownLatch(4)
    val (t, outcome) = start("/a", 20L, 3) { n =>
      synced.countDown()
      if (n % 2 == 0) result("success", Some(n.toLong)) else result("no_action", None)
    }
    assert(synced.await(10, TimeUnit.SECONDS))
    // One stream per index.
    val e = intercept[IndexTablesException](
      CompanionStreams.run("/a", 20L, 3, () => false)(() => fail("must not sync")))
    assert(e.errorClass == "INDEXTABLES_COMPANION_STREAM_ACTIVE", e.getMessage)
    assert(CompanionStreams.indexes == Seq("/a"))
    assert(CompanionStreams.stop("/a"))
    t.join(10000)
    assert(!t.isAlive)
    val results = outcome().toOption.get
    assert(results.nonEmpty && results.forall(_.status == "success"))
    assert(results.map(_.version.get) == results.map(_.version.get).sorted)
    assert(!CompanionStreams.stop("/a"))
    assert(CompanionStreams.indexes.isEmpty)
  }

  test("a failed first sync ends the stream at once; later ones are retried up to a limit") {
    val (first, firstOutcome) = start("/b", 10L, 5)(_ => throw new IllegalStateException("bad"))
    first.join(10000)
    assert(firstOutcome().left.toOption.map(_.getMessage) == Some("bad"))
    val (later, laterOutcome) = start("/c", 1L, 3) { n =>
      if (n == 1) result("success", Some(1L)) else throw new IllegalStateException(s"fail $n")
    }
    later.join(10000)
    // Sync 1 committed, syncs 2, 3 and 4 failed: the third failure in a row ends it.
    assert(laterOutcome().left.toOption.map(_.getMessage) == Some("fail 4"))
  }

  test("a sync whose Spark job was cancelled ends the stream as a stop does") {
    val (t, outcome) = start("/f", 1L, 3) { n =>
      if (n == 1) result("success", Some(1L))
      else throw new RuntimeException(
        "indexing failed",
        new SparkException("Job 12 cancelled as part of cancellation of all jobs"))
    }
    t.join(10000)
    assert(outcome().toOption.get.map(_.version) == Seq(Some(1L)))
    assert(!CompanionStreams.jobCancelled(new SparkException("Job 12 failed: cancelled later")))
  }

  test("an interrupted stream ends, and so does one whose Spark context stopped") {
    val waiting = new CountDownLatch(1)
    val (t, outcome) = start("/d", 60000L, 3) { _ =>
      waiting.countDown()
      result("success", Some(7L))
    }
    assert(waiting.await(10, TimeUnit.SECONDS))
    t.interrupt()
    t.join(10000)
    assert(!t.isAlive)
    assert(outcome().toOption.get.map(_.version) == Seq(Some(7L)))
    assert(CompanionStreams.run("/e", 10L, 3, () => true)(() => fail("must not sync")).isEmpty)
  }
}

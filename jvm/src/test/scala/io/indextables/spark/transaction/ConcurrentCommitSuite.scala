package io.indextables.spark.transaction

import java.util.concurrent.{Callable, Executors, TimeUnit}

import scala.collection.JavaConverters._

import org.scalatest.funsuite.AnyFunSuite

class ConcurrentCommitSuite extends AnyFunSuite {
  import TransactionTestUtils._

  private val threads = 8
  private val perThread = 20

  // Short delays keep the suite fast; many attempts make it robust to scheduling.
  private val options = Map(
    TransactionLogConfig.RetryMaxAttempts.key -> "1000",
    TransactionLogConfig.RetryBaseDelayMs.key -> "1",
    TransactionLogConfig.RetryMaxDelayMs.key -> "20")

  /**
   * Runs `threads` writers that each append `perThread` single-file commits, and checks that
   * versions are dense and every file is live exactly once. With `sharedHandle` all writers use
   * one TransactionLog (one driver, many threads); otherwise each has its own (many drivers).
   */
  private def appendConcurrently(sharedHandle: Boolean): Unit = withTempDir { dir =>
    TransactionLog.clearCache()
    def handle(t: Int): TransactionLog = {
      val opts = if (sharedHandle) options else options + ("test.writer" -> t.toString)
      TransactionLog.forTable(dir.getAbsolutePath, hadoopConf, opts)
    }
    handle(0).startTransaction().commit("CREATE")(_ => Seq(Protocol, metadata()))

    val pool = Executors.newFixedThreadPool(threads)
    val versions =
      try {
        val tasks = (0 until threads).map { t =>
          new Callable[Seq[Long]] {
            override def call(): Seq[Long] = (0 until perThread).map { i =>
              handle(t).startTransaction().commit("WRITE")(_ => Seq(add(s"t$t-$i")))
            }
          }
        }
        pool.invokeAll(tasks.asJava, 2, TimeUnit.MINUTES).asScala.flatMap(_.get()).toVector
      } finally pool.shutdownNow()

    val total = threads * perThread
    assert(versions.sorted === (1L to total).toVector)
    assert(handle(0).listVersions() === (0L to total).toVector)
    TransactionLog.clearCache()
    val s = TransactionLog.forTable(dir.getAbsolutePath, hadoopConf, Map.empty).snapshot()
    assert(s.version === total)
    val paths = s.allFiles.map(_.path)
    assert(paths.size === total)
    val expected = for (t <- 0 until threads; i <- 0 until perThread) yield s"t$t-$i"
    assert(paths.toSet === expected.toSet)
  }

  test("8 writers with their own handles x 20 appends: dense versions, every add once") {
    appendConcurrently(sharedHandle = false)
  }

  test("8 threads sharing one handle x 20 appends: dense versions, every add once") {
    appendConcurrently(sharedHandle = true)
  }
}

package io.indextables.spark.transaction

import java.util.concurrent.{Callable, Executors, TimeUnit}

import scala.collection.JavaConverters._

import org.scalatest.funsuite.AnyFunSuite

class ConcurrentCommitSuite extends AnyFunSuite {
  import TransactionTestUtils._

  test("8 threads x 20 appends: dense versions 0..160 and every add exactly once") {
    withTempDir { dir =>
      TransactionLog.clearCache()
      // Short delays keep the suite fast; many attempts make the test robust to scheduling.
      val options = Map(
        TransactionLogConfig.RetryMaxAttempts.key -> "1000",
        TransactionLogConfig.RetryBaseDelayMs.key -> "1",
        TransactionLogConfig.RetryMaxDelayMs.key -> "20")
      val log = TransactionLog.forTable(dir.getAbsolutePath, hadoopConf, options)
      log.startTransaction().commit("CREATE")(_ => Seq(Protocol, metadata()))

      val threads = 8
      val perThread = 20
      val pool = Executors.newFixedThreadPool(threads)
      val versions =
        try {
          val tasks = (0 until threads).map { t =>
            new Callable[Seq[Long]] {
              override def call(): Seq[Long] = (0 until perThread).map { i =>
                // Each thread uses its own handle, like separate drivers would.
                val own = TransactionLog.forTable(dir.getAbsolutePath, hadoopConf,
                  options + ("thread" -> t.toString))
                own.startTransaction().commit("WRITE")(_ => Seq(add(s"t$t-$i")))
              }
            }
          }
          pool.invokeAll(tasks.asJava, 2, TimeUnit.MINUTES).asScala.flatMap(_.get()).toVector
        } finally pool.shutdownNow()

      assert(versions.sorted === (1L to threads * perThread).toVector)
      assert(log.listVersions() === (0L to threads * perThread).toVector)
      TransactionLog.clearCache()
      val s = TransactionLog.forTable(dir.getAbsolutePath, hadoopConf, Map.empty).snapshot()
      assert(s.version === threads * perThread)
      val paths = s.allFiles.map(_.path)
      assert(paths.size === threads * perThread)
      val expected = for (t <- 0 until threads; i <- 0 until perThread) yield s"t$t-$i"
      assert(paths.toSet === expected.toSet)
    }
  }
}

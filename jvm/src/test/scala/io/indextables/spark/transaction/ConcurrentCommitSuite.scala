package io.indextables.spark.transaction

import java.io.File
import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.util.concurrent.{Callable, Executors, TimeUnit}

import scala.jdk.CollectionConverters._

import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.config.IndexTablesConf

/**
 * Many writers commit to one table at once, as threads of one JVM and as separate OS processes;
 * every commit lands exactly once, versions are dense and the final snapshot holds every file.
 */
class ConcurrentCommitSuite extends AnyFunSuite {
  import TransactionTestUtils._

  private val threads = 8
  private val perThread = 20

  // Short delays keep the suite fast; many attempts make it robust to scheduling.
  private val options = Map(
    IndexTablesConf.RetryMaxAttempts.key -> "1000",
    IndexTablesConf.RetryBaseDelayMs.key -> "1",
    IndexTablesConf.RetryMaxDelayMs.key -> "20")

  /**
   * Runs `threads` writers that each append `perThread` single-file commits, and checks that
   * versions are dense and every file is live exactly once. With `sharedHandle` all writers use
   * one TransactionLog (one driver, many threads); otherwise each has its own (many drivers).
   */
  private def appendConcurrently(sharedHandle: Boolean): Unit = withTempDir { dir =>
    TransactionLog.clearCache()
    def handle(t: Int): TransactionLog = {
      val opts = if (sharedHandle) options else options + ("test.writer" -> t.toString)
      TransactionTestUtils.logFor(dir.getAbsolutePath, hadoopConf, opts)
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
    val s = TransactionTestUtils.logFor(dir.getAbsolutePath, hadoopConf, Map.empty).snapshot()
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

  test("8 OS processes x 20 appends, checkpointing as they go: dense versions, every add once") {
    withTempDir { dir =>
      TransactionLog.clearCache()
      TransactionTestUtils.logFor(dir.getAbsolutePath, hadoopConf, Map.empty)
        .startTransaction().commit("CREATE")(_ => Seq(Protocol, metadata()))
      val java = new File(System.getProperty("java.home"), "bin/java").getAbsolutePath
      val go = new File(dir, "go")
      val children = (0 until threads).map { t =>
        new ProcessBuilder(
          java,
          "-Xmx192m",
          "-XX:TieredStopAtLevel=1",
          "-cp",
          System.getProperty("java.class.path"),
          ConcurrentWriterChild.getClass.getName.stripSuffix("$"),
          dir.getAbsolutePath,
          t.toString,
          perThread.toString,
          go.getAbsolutePath
        )
          .redirectErrorStream(true)
          .redirectOutput(new File(dir, s"writer-$t.log"))
          .start()
      }
      // Every child is up and waiting before any commits, so that they race.
      val deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2)
      def ready = (0 until threads).forall(t => new File(dir, s"ready-$t").exists())
      while (!ready && System.nanoTime() < deadline) Thread.sleep(50)
      assert(ready, "not every writer process started")
      Files.write(go.toPath, Array.emptyByteArray)
      children.zipWithIndex.foreach { case (p, t) =>
        assert(p.waitFor(5, TimeUnit.MINUTES), s"writer $t did not finish")
        val log = new String(
          Files.readAllBytes(new File(dir, s"writer-$t.log").toPath),
          StandardCharsets.UTF_8)
        assert(p.exitValue() === 0, s"writer $t failed:\n$log")
      }
      val committed = (0 until threads).flatMap { t =>
        Files.readAllLines(new File(dir, s"versions-$t").toPath).asScala.map(_.toLong)
      }
      val total = threads * perThread
      assert(committed.sorted === (1L to total).toVector, "each commit got its own version")
      TransactionLog.clearCache()
      val log = TransactionTestUtils.logFor(dir.getAbsolutePath, hadoopConf, Map.empty)
      assert(log.listVersions() === (0L to total).toVector)
      val s = log.snapshot()
      assert(s.version === total)
      val expected = for (t <- 0 until threads; i <- 0 until perThread) yield s"p$t-$i"
      assert(s.allFiles.map(_.path).sorted === expected.sorted)
      // The writers checkpointed along the way (every 10 versions), and the state agrees.
      assert(log.lastCheckpoint().exists(_.version >= total - 10))
    }
  }
}

/** One writer process of [[ConcurrentCommitSuite]]: waits for the go file, then appends. */
object ConcurrentWriterChild {
  def main(args: Array[String]): Unit = {
    val Array(table, id, count, go) = args
    val log = TransactionTestUtils.logFor(
      table,
      TransactionTestUtils.hadoopConf,
      Map(
        IndexTablesConf.RetryMaxAttempts.key -> "1000",
        IndexTablesConf.RetryBaseDelayMs.key -> "1",
        IndexTablesConf.RetryMaxDelayMs.key -> "50")
    )
    Files.write(new File(new File(table), s"ready-$id").toPath, Array.emptyByteArray)
    while (!new File(go).exists()) Thread.sleep(5)
    val versions = (0 until count.toInt).map { i =>
      log.startTransaction().commit("WRITE")(_ => Seq(TransactionTestUtils.add(s"p$id-$i")))
    }
    Files.write(
      new File(new File(table), s"versions-$id").toPath,
      versions.mkString("\n").getBytes(StandardCharsets.UTF_8))
  }
}

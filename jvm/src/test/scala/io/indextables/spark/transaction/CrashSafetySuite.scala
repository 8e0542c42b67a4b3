package io.indextables.spark.transaction

import java.io.File
import java.util.concurrent.TimeUnit

import org.apache.hadoop.fs.Path
import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.transaction.TransactionTestUtils._
import io.indextables.spark.storage.{DelegatingLogStore, LogStore}

/**
 * Kills (SIGKILL) a separate JVM in the middle of a checkpoint, of a state compaction and of a
 * stream of commits; every time the table still reads at its last committed version and the
 * next writer proceeds.
 */
class CrashSafetySuite extends AnyFunSuite with BeforeAndAfterEach {

  override def beforeEach(): Unit = TransactionLog.clearCache()

  private val Interval = Map("spark.indextables.checkpoint.interval" -> "2")

  private def open(dir: File, options: Map[String, String] = Interval): TransactionLog =
    TransactionTestUtils.logFor(dir.getAbsolutePath, hadoopConf, options)

  private def spawn(dir: File, mode: String): Process = {
    val java = new File(System.getProperty("java.home"), "bin/java").getAbsolutePath
    new ProcessBuilder(
      java,
      "-Xmx256m",
      "-cp",
      System.getProperty("java.class.path"),
      CrashChild.getClass.getName.stripSuffix("$"),
      dir.getAbsolutePath,
      mode)
      .redirectErrorStream(true)
      .redirectOutput(new File(dir, s"child-$mode.log"))
      .start()
  }

  private def killWhenMarked(dir: File, p: Process, mode: String): Unit = {
    val marker = new File(dir, CrashChild.Marker)
    val deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120)
    while (!marker.exists() && p.isAlive && System.nanoTime() < deadline) Thread.sleep(20)
    assert(marker.exists(), s"the $mode child never reached its crash point")
    p.destroyForcibly()
    assert(p.waitFor(30, TimeUnit.SECONDS))
    marker.delete()
  }

  private def seed(dir: File): Unit = {
    val log = open(dir)
    log.startTransaction().commit("CREATE")(_ => Seq(Protocol, metadata()))
    (1 to 5).foreach(i => log.startTransaction().commit("WRITE")(_ => Seq(add(s"f$i"))))
  }

  Seq("checkpoint", "compaction").foreach { mode =>
    test(s"a process killed in the middle of a $mode leaves the table readable") {
      withTempDir { dir =>
        seed(dir)
        val before = open(dir).lastCheckpoint().get
        killWhenMarked(dir, spawn(dir, mode), mode)
        TransactionLog.clearCache()
        val s = open(dir).snapshot()
        assert(s.version === 5L && s.allFiles.map(_.path) === (1 to 5).map(i => s"f$i"))
        assert(open(dir).lastCheckpoint() === Some(before))
        val log = open(dir)
        log.startTransaction().commit("WRITE")(_ => Seq(add("f6")))
        assert(log.lastCheckpoint().get.version === 6L)
        TransactionLog.clearCache()
        assert(open(dir).snapshot().allFiles.map(_.path) === (1 to 6).map(i => s"f$i"))
      }
    }
  }

  test("a process killed while committing leaves dense versions and the next writer proceeds") {
    withTempDir { dir =>
      seed(dir)
      val p = spawn(dir, "commits")
      killWhenMarked(dir, p, "commits")
      TransactionLog.clearCache()
      val s = open(dir).snapshot()
      val versions = open(dir).listVersions()
      assert(versions === (0L to versions.last))
      assert(s.allFiles.size.toLong === s.version)
      val next = open(dir).startTransaction().commit("WRITE")(_ => Seq(add("after")))
      assert(next === s.version + 1)
    }
  }
}

/** The child process of [[CrashSafetySuite]]: runs until it is killed. */
object CrashChild {
  val Marker = "crash-point-reached"

  def main(args: Array[String]): Unit = {
    val dir = new File(args(0))
    val mode = args(1)
    val marker = new File(dir, Marker)
    val log = TransactionTestUtils.logFor(
      dir.getAbsolutePath,
      hadoopConf,
      Map(
        "spark.indextables.checkpoint.interval" -> "1",
        "spark.indextables.state.compaction.maxManifests" -> "1000"))
    mode match {
      case "commits" =>
        var i = 0
        while (true) {
          i += 1
          log.startTransaction().commit("WRITE")(s => Seq(add(s"c${s.get.version + 1}")))
          if (i == 5) marker.createNewFile()
        }
      case _ =>
        // Hang on the state manifest (the second write), after the new manifests are written.
        val store = new HangingStore(log.store, hangAt = 2, marker)
        CheckpointWriter.checkpointWith(
          store,
          log,
          log.snapshot(),
          forceCompaction = mode == "compaction")
    }
  }

  private class HangingStore(inner: LogStore, hangAt: Int, marker: File)
      extends DelegatingLogStore(inner) {
    private var writes = 0
    private def tick(): Unit = {
      writes += 1
      if (writes == hangAt) {
        marker.createNewFile()
        while (true) Thread.sleep(1000)
      }
    }
    override def putIfAbsent(path: Path, bytes: Array[Byte]): Boolean = {
      tick(); inner.putIfAbsent(path, bytes)
    }
    override def overwrite(path: Path, bytes: Array[Byte]): Unit = {
      tick(); inner.overwrite(path, bytes)
    }
  }
}

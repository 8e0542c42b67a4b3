package io.indextables.spark.transaction

import java.io.File
import java.nio.file.Files

import org.scalatest.BeforeAndAfterEach
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.TransactionLogException
import io.indextables.spark.transaction.TransactionTestUtils._

/** Bad log content gives errors that name the file at fault. */
class BadInputSuite extends AnyFunSuite with BeforeAndAfterEach {

  override def beforeEach(): Unit = TransactionLog.clearCache()

  private def table(dir: File, interval: Int = 10): TransactionLog = {
    val log = TransactionTestUtils.logFor(
      dir.getAbsolutePath,
      hadoopConf,
      Map("spark.indextables.checkpoint.interval" -> interval.toString))
    log.startTransaction().commit("CREATE")(_ => Seq(Protocol, metadata()))
    log.startTransaction().commit("WRITE")(_ => Seq(add("a")))
    log
  }

  private def reopen(dir: File): TransactionLog = {
    TransactionLog.clearCache()
    TransactionTestUtils.logFor(dir.getAbsolutePath, hadoopConf, Map.empty)
  }

  private def logFile(dir: File, name: String): File = new File(dir, s"_transaction_log/$name")

  test("an unknown action type in a version file names the file and the type") {
    withTempDir { dir =>
      table(dir)
      val f = logFile(dir, VersionFiles.fileName(2))
      Files.write(f.toPath, """{"commitInfo":{"op":"x"}}""".getBytes("UTF-8"))
      val e = intercept[TransactionLogException](reopen(dir).snapshot())
      assert(e.getMessage.contains(f.getAbsolutePath) && e.getMessage.contains("commitInfo"))
    }
  }

  test("a protocol from the future in a version file names the file and the version") {
    withTempDir { dir =>
      table(dir)
      val f = logFile(dir, VersionFiles.fileName(2))
      Files.write(
        f.toPath,
        """{"protocol":{"minReaderVersion":7,"minWriterVersion":7}}""".getBytes("UTF-8"))
      val e = intercept[TransactionLogException](reopen(dir).snapshot())
      assert(e.getMessage.contains(f.getAbsolutePath) && e.getMessage.contains("version 7"))
    }
  }

  test("a corrupt state manifest names the file; the pointer to it is not silently skipped") {
    withTempDir { dir =>
      table(dir, interval = 1)
      val f = logFile(dir, s"${LastCheckpoint.stateDirName(1)}/_manifest.avro")
      Files.write(f.toPath, Array[Byte](1, 2, 3))
      val e = intercept[TransactionLogException](reopen(dir).snapshot())
      assert(e.getMessage.contains(f.getAbsolutePath))
    }
  }

  test("a missing shared manifest names the manifest file") {
    withTempDir { dir =>
      table(dir, interval = 1)
      val manifests = logFile(dir, "manifests").listFiles().filter(_.getName.endsWith(".avro"))
      manifests.foreach(_.delete())
      // The snapshot's metadata comes from the state manifest; its files fail to load.
      val e = intercept[TransactionLogException](reopen(dir).snapshot().allFiles)
      assert(e.getMessage.contains(manifests.head.getAbsolutePath))
    }
  }

  test("an unknown action type in a JSON checkpoint names the checkpoint file") {
    withTempDir { dir =>
      val log = TransactionTestUtils.logFor(
        dir.getAbsolutePath,
        hadoopConf,
        Map(
          "spark.indextables.checkpoint.interval" -> "1",
          "spark.indextables.state.format" -> "json"))
      log.startTransaction().commit("CREATE")(_ => Seq(Protocol, metadata()))
      log.startTransaction().commit("WRITE")(_ => Seq(add("a")))
      val f = logFile(dir, "00000000000000000001.checkpoint.json")
      assert(f.isFile)
      Files.write(f.toPath, """{"bogus":{}}""".getBytes("UTF-8"))
      val e = intercept[TransactionLogException](reopen(dir).snapshot())
      assert(e.getMessage.contains(f.getAbsolutePath) && e.getMessage.contains("bogus"))
    }
  }
}

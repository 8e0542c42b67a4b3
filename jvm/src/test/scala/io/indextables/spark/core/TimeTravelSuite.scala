package io.indextables.spark.core

import java.io.File

import io.indextables.spark.IndexTablesTestBase
import io.indextables.spark.transaction.{TransactionLog, VersionFiles}

/** versionAsOf and timestampAsOf reads, across checkpoints and after retention. */
class TimeTravelSuite extends IndexTablesTestBase {
  import spark.implicits._

  private def write(path: String, ids: Seq[Long], mode: String = "append"): Unit =
    ids.toDF("id").write.format("indextables")
      .option("spark.indextables.checkpoint.interval", "2")
      .mode(mode).save(path)

  private def ids(path: String, options: (String, String)*): Seq[Long] =
    spark.read.format("indextables").options(options.toMap).load(path)
      .as[Long].collect().toSeq.sorted

  test("versionAsOf reads each version; the plain read is the latest") {
    val path = tablePath("tt-version")
    write(path, Seq(1L, 2L))
    write(path, Seq(3L))
    write(path, Seq(4L))
    write(path, Seq(9L), mode = "overwrite")
    assert(ids(path) === Seq(9L))
    assert(ids(path, "versionAsOf" -> "0") === Seq(1L, 2L))
    assert(ids(path, "versionAsOf" -> "2") === Seq(1L, 2L, 3L, 4L))
    assert(ids(path, "versionAsOf" -> "3") === Seq(9L))
    val e = intercept[Exception](ids(path, "versionAsOf" -> "7"))
    assert(e.getMessage.contains("Version 7") && e.getMessage.contains("latest version is 3"))
  }

  test("timestampAsOf picks the newest version committed at or before the timestamp") {
    val path = tablePath("tt-timestamp")
    write(path, Seq(1L))
    val log = new File(path, "_transaction_log")
    new File(log, VersionFiles.fileName(0)).setLastModified(1000000L)
    write(path, Seq(2L))
    new File(log, VersionFiles.fileName(1)).setLastModified(2000000L)
    TransactionLog.clearCache()
    assert(ids(path, "timestampAsOf" -> "1500000") === Seq(1L))
    assert(ids(path, "timestampAsOf" -> "2000000") === Seq(1L, 2L))
    assert(ids(path, "timestampAsOf" -> "2099-01-01 00:00:00") === Seq(1L, 2L))
    val e = intercept[Exception](ids(path, "timestampAsOf" -> "1970-01-01 00:00:00"))
    assert(e.getMessage.contains("before the earliest readable version"))
    intercept[Exception](ids(path, "timestampAsOf" -> "10", "versionAsOf" -> "0"))
  }

  test("a version whose files retention removed gives a clear error; later versions read") {
    val path = tablePath("tt-retention")
    (1L to 5L).foreach(i => write(path, Seq(i)))
    val log = new File(path, "_transaction_log")
    (0 to 2).foreach(v => new File(log, VersionFiles.fileName(v)).delete())
    TransactionLog.clearCache()
    assert(ids(path) === Seq(1L, 2L, 3L, 4L, 5L))
    assert(ids(path, "versionAsOf" -> "2") === Seq(1L, 2L, 3L))
    val e = intercept[Exception](ids(path, "versionAsOf" -> "1"))
    assert(e.getMessage.contains("removed by log retention"))
    assert(e.getMessage.contains("earliest readable version is 2"))
  }
}

package io.indextables.spark.core

import java.nio.file.Files

import org.apache.commons.io.FileUtils
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.execution.datasources.v2.BatchScanExec
import org.apache.spark.sql.{DataFrame, SparkSession}
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.config.IndexTablesConf
import io.indextables.spark.extensions.ExtensionsSession
import io.indextables.spark.read.IndexTables4SparkScan
import io.indextables.spark.transaction.state.AvroStateReader
import io.indextables.spark.storage.LocalLogStore
import io.indextables.spark.transaction.{LastCheckpoint, Snapshot, TransactionLog}

/** How reads and writes reach a table's log: the shared snapshot, and settings precedence. */
class TableLogResolverSuite extends AnyFunSuite with BeforeAndAfterAll {
  private var spark: SparkSession = _
  private lazy val scratch = Files.createTempDirectory("indextables-resolver").toFile

  override def beforeAll(): Unit = {
    super.beforeAll()
    spark = ExtensionsSession.create("resolver")
    // The tests read the snapshot of the task scan: no search is answered on the driver.
    spark.conf.set(IndexTablesConf.DriverSearchMaxRows.key, "0")
  }

  override def afterAll(): Unit =
    try {
      spark.stop()
      FileUtils.deleteQuietly(scratch)
    } finally super.afterAll()

  private def path(name: String): String = new java.io.File(scratch, name).getAbsolutePath

  private def scanSnapshot(df: DataFrame): Snapshot = {
    val scans = df.queryExecution.executedPlan.collect {
      case b: BatchScanExec if b.scan.isInstanceOf[IndexTables4SparkScan] =>
        b.scan.asInstanceOf[IndexTables4SparkScan]
    }
    assert(scans.size === 1, df.queryExecution.executedPlan)
    scans.head.snapshot
  }

  test(
    "two IndexQuery queries on one table share one snapshot: the hand-off key is not a log option") {
    val s = spark; import s.implicits._
    val p = path("shared")
    Seq((1L, "connection timeout"), (2L, "disk full")).toDF("id", "message").write
      .format("indextables").option("spark.indextables.indexing.typemap.message", "text").save(p)
    spark.read.format("indextables").load(p).createOrReplaceTempView("shared_logs")
    val q1 = spark.sql("SELECT id FROM shared_logs WHERE message indexquery 'timeout'")
    val q2 = spark.sql("SELECT id FROM shared_logs WHERE message indexquery 'disk'")
    assert(q1.queryExecution.executedPlan.toString.contains("PushedIndexQuery"))
    assert(scanSnapshot(q1) eq scanSnapshot(q2))
    assert(q1.as[Long].collect().toSeq === Seq(1L) && q2.as[Long].collect().toSeq === Seq(2L))
  }

  test("regression: a lower-cased write option beats the same camelCase log key in the session") {
    // Before one resolver, TransactionLogConfig matched the camelCase session key first, so the
    // session's 1000 entries per manifest won over the write's 1.
    val s = spark; import s.implicits._
    val p = path("precedence")
    spark.conf.set("spark.indextables.state.entriesPerManifest", "1000")
    try {
      (1 to 2).foreach { round =>
        (1 to 40).map(i => (i.toLong, s"row $i of $round")).toDF("id", "message").repartition(4)
          .write.format("indextables").mode("append")
          .option("spark.indextables.state.entriesPerManifest", "1")
          .option("spark.indextables.checkpoint.interval", "1")
          .save(p)
      }
    } finally spark.conf.unset("spark.indextables.state.entriesPerManifest")
    val logPath = new Path(p, TransactionLog.LogDirName)
    val pointer = LastCheckpoint.fromJson(
      LocalLogStore.read(new Path(logPath, TransactionLog.LastCheckpointName)))
    assert(pointer.version === 1L)
    val stateDir = pointer.stateDir.getOrElse(LastCheckpoint.stateDirName(pointer.version))
    val manifest = AvroStateReader.readManifest(LocalLogStore, logPath, stateDir)
    val files = TableLogResolver.loadExisting(p, Map.empty).numFiles
    assert(manifest.manifests.size === files && files >= 4, manifest.manifests)
  }
}

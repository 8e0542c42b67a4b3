package io.indextables.spark.read

import java.util.concurrent.atomic.AtomicBoolean

import scala.concurrent.{Await, ExecutionContext, Future}
import scala.concurrent.duration._

import org.apache.spark.sql.execution.datasources.v2.BatchScanExec

import io.indextables.spark.IndexTablesTestBase
import io.indextables.spark.storage.SplitFileGate

/**
 * FLUSH DISK CACHE against reads in progress: it closes the disk-cached managers and deletes
 * their directories and the local split copies, so it must wait for the reads using them
 * (SplitFileGate), and reads that start meanwhile must wait for it.
 */
class FlushDiskCacheRaceSuite extends IndexTablesTestBase {
  private implicit val ec: ExecutionContext = ExecutionContext.global

  test("a FLUSH DISK CACHE racing a read waits for it, and the read returns every row") {
    val path = tablePath("flush-race")
    spark.range(5000).selectExpr("id", "concat('message ', id) as message").coalesce(1)
      .write.format("indextables").save(path)
    spark.conf.set("spark.indextables.cache.disk.enabled", "true")
    spark.conf.set("spark.indextables.cache.disk.path", tablePath("disk-cache"))
    try {
      val df = spark.read.format("indextables").load(path)
      val scan = df.queryExecution.executedPlan.collectFirst { case b: BatchScanExec => b }.get
      val partitions = scan.batch.planInputPartitions()
      assert(partitions.length === 1)
      val reader = scan.batch.createReaderFactory().createReader(partitions.head)
      var rows = 0L
      var sum = 0L
      assert(reader.next())
      rows += 1; sum += reader.get().getLong(0)
      assert(SplitFileGate.inProgress === 1)

      // The flush starts while the read is in progress: it must not run under it.
      val flush = Future(SplitCaches.flushDisk())
      Thread.sleep(1000)
      assert(!flush.isCompleted, "FLUSH DISK CACHE ran under a read in progress")
      while (reader.next()) { rows += 1; sum += reader.get().getLong(0) }
      reader.close()
      val flushed = Await.result(flush, 60.seconds)
      assert(rows === 5000L && sum === (0L until 5000L).sum)
      assert(flushed.diskCaches === 1, flushed)
      assert(SplitFileGate.inProgress === 0)

      // The next read makes a new manager and reads every row.
      assert(df.count() === 5000L)
      assert(df.filter("id % 7 = 0").collect().length === 715)
    } finally {
      spark.conf.unset("spark.indextables.cache.disk.enabled")
      spark.conf.unset("spark.indextables.cache.disk.path")
    }
  }

  test("a read that starts during a flush waits for it; a nested read does not") {
    val gate = SplitFileGate
    val first = gate.enter()
    val flushRunning = new AtomicBoolean(false)
    val flushDone = new AtomicBoolean(false)
    val flush = Future(gate.exclusive {
      flushRunning.set(true)
      Thread.sleep(300)
      flushDone.set(true)
    })
    Thread.sleep(300)
    assert(!flushRunning.get, "the flush ran while a read was in progress")
    // A read nested in the one in progress (same thread) does not wait for the flush.
    val nested = gate.enter()
    nested.end()
    // A new read on another thread waits until the flush is done.
    val second = Future {
      val use = gate.enter()
      val sawFlushDone = flushDone.get
      use.end()
      sawFlushDone
    }
    Thread.sleep(300)
    assert(!second.isCompleted && !flushRunning.get)
    first.end()
    Await.result(flush, 30.seconds)
    assert(Await.result(second, 30.seconds), "a read ran during the flush")
    first.end() // idempotent
    assert(gate.inProgress === 0)
  }

  test("a flush interrupted while it waits for a read holds no later read back") {
    val gate = SplitFileGate
    val first = gate.enter()
    val ran = new AtomicBoolean(false)
    val flusher = new Thread(() =>
      try gate.exclusive(ran.set(true))
      catch { case _: InterruptedException => () })
    flusher.start()
    Thread.sleep(300)
    flusher.interrupt()
    flusher.join(10000)
    assert(!flusher.isAlive && !ran.get)
    // A read on another thread starts at once: the interrupted flush left the gate open.
    val second = Future { gate.enter().end(); true }
    assert(Await.result(second, 10.seconds))
    first.end()
    assert(gate.inProgress === 0)
  }
}

package io.indextables.spark.metrics

import org.scalatest.funsuite.AnyFunSuite

class NativeCountersSuite extends AnyFunSuite {

  /** A counter over a value the test moves by hand. */
  private final class Source {
    var value = 0L
    val counter = new NativeCounters.Counter(() => value)
  }

  test("one window claims what the counter gained while it was open, once") {
    val s = new Source
    s.value = 100 // before the window: nobody's
    val w = s.counter.window()
    s.value = 130
    assert(w.claim() === 30)
    assert(w.claim() === 0)
    s.value = 135
    assert(w.close() === 5)
    s.value = 200 // after it: nobody's
    assert(w.claim() === 0)
    val next = s.counter.window()
    s.value = 210
    assert(next.close() === 10)
  }

  test("overlapping windows count each unit once: the first to claim it gets it") {
    val s = new Source
    val a = s.counter.window()
    s.value = 10
    val b = s.counter.window()
    s.value = 25
    assert(a.claim() === 25)
    assert(b.claim() === 0)
    s.value = 40
    assert(b.claim() === 15)
    assert(a.close() === 0)
    s.value = 45
    assert(b.close() === 5)
  }

  test("what a counter gains while any window is open is claimed, whoever opened first") {
    val s = new Source
    val a = s.counter.window()
    s.value = 10
    assert(a.claim() === 10)
    s.value = 50 // only a is open
    val b = s.counter.window()
    s.value = 60
    // b claims first, and gets a's share too: together they count all 60, each unit once.
    assert(b.claim() === 50)
    assert(a.close() === 0)
    assert(b.close() === 0)
  }

  test("a counter reset (a cache flush) restarts the claims without negative counts") {
    val s = new Source
    s.value = 500
    val a = s.counter.window()
    s.value = 600
    assert(a.claim() === 100)
    s.value = 0 // reset
    assert(a.claim() === 0)
    s.value = 20
    assert(a.close() === 20)
  }

  test("counters that only sum others open no window; reading ones hold one until closed") {
    val before = NativeCounters.bytesFetched.openWindows
    val total = ScanTaskCounters.total()
    assert(NativeCounters.bytesFetched.openWindows === before)
    total.close()
    val reading = ScanTaskCounters.reading()
    assert(NativeCounters.bytesFetched.openWindows === before + 1)
    reading.close()
    reading.close()
    assert(NativeCounters.bytesFetched.openWindows === before)
  }

  test("the scan's task values are cumulative and named as the metrics are") {
    val c = ScanTaskCounters.reading()
    c.splitsSearched += 2
    c.rowsReturned += 7
    c.timed(Thread.sleep(2))
    val other = ScanTaskCounters.total()
    other.documentsMatched += 3
    c.add(other)
    c.close()
    val values = c.values.map(v => v.name -> v.value).toMap
    assert(values(ScanMetrics.SplitsSearched) === 2)
    assert(values(ScanMetrics.RowsReturned) === 7)
    assert(values(ScanMetrics.DocumentsMatched) === 3)
    assert(values(ScanMetrics.NativeSearchTime) >= 2000000L)
    assert(ScanMetrics.all.map(_.name).toSet === (values.keySet ++ Set(
      ScanMetrics.SplitsInSnapshot,
      ScanMetrics.SplitsPrunedByPartition,
      ScanMetrics.SplitsPrunedByStatistics)))
  }

  test("sizes and durations read as Spark's UI shows them") {
    assert(ScanMetrics.bytes(0) === "0.0 B")
    assert(ScanMetrics.bytes(1536) === "1.5 KiB")
    assert(ScanMetrics.bytes(5L * 1024 * 1024) === "5.0 MiB")
    assert(ScanMetrics.duration(850L * 1000000) === "850 ms")
    assert(ScanMetrics.duration(12400L * 1000000) === "12.4 s")
    // Every metric class has the constructor Spark instantiates it by, and its instances are
    // equal (so two plans holding them are).
    ScanMetrics.all.foreach(m => assert(m.getClass.getConstructor().newInstance().name === m.name))
    assert(ScanMetrics.all.toSeq === ScanMetrics.all.toSeq)
    assert(ScanMetrics.all.map(_.hashCode).toSeq === ScanMetrics.all.map(_.hashCode).toSeq)
  }
}

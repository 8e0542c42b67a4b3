package io.indextables.spark.metrics

import java.util.concurrent.atomic.AtomicLong

import org.apache.spark.sql.connector.metric.CustomTaskMetric

import io.indextables.tantivy4java.split.SplitCacheManager

/**
 * What one read task (or the driver, for a scan it answered) did, as the scan's custom
 * metrics: the readers of its splits count into it, on one thread. From its making to its
 * `close` (which its owner calls once, in a finally) it holds windows on the JVM's counters of
 * bytes fetched and cache hits ([[NativeCounters]]); `settle` claims their counts so far, which
 * the readers call when a split is done.
 */
final class ScanTaskCounters private (reading: Boolean) {
  var splitsSearched = 0L
  var documentsMatched = 0L
  var rowsReturned = 0L
  var nativeNanos = 0L
  private var bytes = 0L
  private var hits = 0L
  private val bytesWindow = if (reading) Some(NativeCounters.bytesFetched.window()) else None
  private val hitsWindow = if (reading) Some(NativeCounters.cacheHits.window()) else None

  /** `f`, its time added to the native search time. */
  def timed[T](f: => T): T = {
    val start = System.nanoTime()
    try f
    finally nativeNanos += System.nanoTime() - start
  }

  /** Claims this task's share of the JVM's bytes fetched and cache hits so far. */
  def settle(): Unit = {
    bytesWindow.foreach(bytes += _.claim())
    hitsWindow.foreach(hits += _.claim())
  }

  /** Claims what is left, and closes the windows: the task is done. */
  def close(): Unit = {
    bytesWindow.foreach(bytes += _.close())
    hitsWindow.foreach(hits += _.close())
  }

  /** Adds what `other` (a reader on another thread of the same driver scan) counted. */
  def add(other: ScanTaskCounters): Unit = {
    splitsSearched += other.splitsSearched
    documentsMatched += other.documentsMatched
    rowsReturned += other.rowsReturned
    nativeNanos += other.nativeNanos
    bytes += other.bytes
    hits += other.hits
  }

  /** The values so far: cumulative, as Spark expects of a reader. */
  def values: Array[CustomTaskMetric] = Array(
    ScanMetrics.value(ScanMetrics.SplitsSearched, splitsSearched),
    ScanMetrics.value(ScanMetrics.DocumentsMatched, documentsMatched),
    ScanMetrics.value(ScanMetrics.RowsReturned, rowsReturned),
    ScanMetrics.value(ScanMetrics.BytesFetched, bytes),
    ScanMetrics.value(ScanMetrics.SplitCacheHits, hits),
    ScanMetrics.value(ScanMetrics.NativeSearchTime, nativeNanos)
  )
}

object ScanTaskCounters {

  /** The counters of a reading task or thread: `close` them once, in a finally. */
  def reading(): ScanTaskCounters = new ScanTaskCounters(true)

  /** A sum of other counters ([[ScanTaskCounters.add]]), or counts nobody reports. */
  def total(): ScanTaskCounters = new ScanTaskCounters(false)
}

/**
 * JVM-wide counters that tantivy4java (and our local copies of splits) keep, shared by every
 * task of the JVM. A task cannot tell its own share of them apart from that of a task running
 * beside it, so the counts are claimed: whatever a counter gained while some window was open
 * goes to the first open window that claims it, and what it gained while none was open (a
 * PREWARM, a merge) is nobody's. So every count is claimed once, and the tasks of a query that
 * runs alone sum to the query's counts.
 */
object NativeCounters {

  /** Bytes fetched from storage: tantivy4java's object-store reads, and our copies of splits. */
  val bytesFetched = new Counter(() =>
    SplitCacheManager.getObjectStorageBytesFetched + StorageBytes.copied.get())

  /** Hits of tantivy4java's in-memory split cache (its L1 byte-range cache). */
  val cacheHits = new Counter(() => SplitCacheManager.getL1CacheStats.getHits)

  /** One counter (reset only by tantivy4java's cache flush), claimed by open windows. */
  final class Counter(read: () => Long) {
    // The reading up to which the counts are claimed (or were nobody's), and the open windows.
    private var claimed = 0L
    private var open = 0

    /** A window open until `close`: call `close` exactly once, in a finally. */
    def window(): Window = synchronized {
      if (open == 0) claimed = read()
      open += 1
      new Window(this)
    }

    private[NativeCounters] def claim(): Long = synchronized {
      val now = read()
      // A reading below the claimed one: the counter was reset since (a cache flush).
      val n = if (now < claimed) 0L else now - claimed
      claimed = now
      n
    }

    private[NativeCounters] def close(): Unit = synchronized { open -= 1 }

    /** How many windows are open (for tests). */
    private[metrics] def openWindows: Int = synchronized(open)
  }

  /** A task's window on one counter. */
  final class Window(counter: Counter) {
    private var closed = false

    /** The counts not claimed yet. */
    def claim(): Long = if (closed) 0L else counter.claim()

    /** Claims what is left, and closes the window. */
    def close(): Long =
      if (closed) 0L
      else {
        val n = counter.claim()
        closed = true
        counter.close()
        n
      }
  }
}

/** Bytes this JVM copied from storage into local copies of splits and Parquet files. */
object StorageBytes {
  val copied = new AtomicLong()
}

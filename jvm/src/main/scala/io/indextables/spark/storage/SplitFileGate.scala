package io.indextables.spark.storage

/**
 * The uses of split files in progress in this JVM (a read, from a split's local copy to its
 * searcher's return; a merge, from its sources' local copies to the merged split), against FLUSH
 * DISK CACHE, which deletes the local copies ([[LocalSplitCache]]) and closes the cache managers
 * searchers use. A use [[SplitFileGate.enter]]s before it touches its split and ends its
 * [[SplitFileGate.Use]] when done with it; [[SplitFileGate.exclusive]] waits until no use is in
 * progress and holds new ones back until it is done. A thread already inside a read
 * never waits (a nested read would otherwise wait for a flush that waits for it). Thread-safe.
 */
object SplitFileGate {
  private var reads = 0
  private var flushing = false
  // Reads in progress per thread, so that a nested read does not wait for a flush.
  private val byThread = new java.util.concurrent.ConcurrentHashMap[Thread, Integer]()

  /** One read in progress; `end` is idempotent and may run on another thread. */
  final class Use private[SplitFileGate] (thread: Thread) {
    private val ended = new java.util.concurrent.atomic.AtomicBoolean(false)

    def end(): Unit = if (ended.compareAndSet(false, true)) {
      byThread.computeIfPresent(thread, (_, n) => if (n <= 1) null else Int.box(n - 1))
      SplitFileGate.synchronized {
        reads -= 1
        if (reads == 0) SplitFileGate.notifyAll()
      }
    }

    /** `f`, ending this use if it fails (a reader whose constructor fails is never closed). */
    def guard[T](f: => T): T =
      try f
      catch { case e: Throwable => end(); throw e }
  }

  /** Starts a read; waits while a flush runs, unless this thread is already inside a read. */
  def enter(): Use = {
    val thread = Thread.currentThread()
    val nested = byThread.containsKey(thread)
    synchronized {
      while (flushing && !nested) wait()
      reads += 1
    }
    byThread.merge(thread, 1, (a, b) => Int.box(a + b))
    new Use(thread)
  }

  /** `f` with no read in progress in this JVM: waits for the reads in progress to end. */
  def exclusive[T](f: => T): T = {
    synchronized {
      while (flushing) wait()
      flushing = true
      // An interrupted flush (its task killed) must not hold reads back for ever.
      try while (reads > 0) wait()
      catch {
        case e: Throwable =>
          flushing = false
          notifyAll()
          throw e
      }
    }
    try f
    finally synchronized {
        flushing = false
        notifyAll()
      }
  }

  /** Reads in progress in this JVM (for tests). */
  private[spark] def inProgress: Int = synchronized(reads)
}

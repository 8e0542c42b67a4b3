package io.indextables.spark.sync

import java.util.concurrent.ConcurrentHashMap

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.spark.SparkException
import org.slf4j.LoggerFactory

import io.indextables.spark.IndexTablesErrors

/**
 * One `BUILD INDEXTABLES COMPANION ... WITH STREAMING POLL INTERVAL n SECONDS|MINUTES`: syncs
 * its index every `intervalMs`, on the thread that ran the command, until it is stopped
 * ([[stop]], [[CompanionStreams.stop]]), its thread is interrupted, or the Spark context stops.
 * A sync that finds nothing new commits nothing (`no_action`), so an idle stream writes no
 * version. A failed first sync ends the stream at once (the command's error: a bad source or
 * clause never loops); a later failure (a racing build, a storage hiccup) is retried after
 * a wait of 2, 4, ... up to 16 intervals, and `maxErrors` failures in a row end the stream with
 * the last one. A sync whose Spark job was cancelled (PySpark's Ctrl-C cancels every job) ends
 * the stream as a stop does.
 *
 * @param index the index location, qualified: one stream per index in an application
 */
final class CompanionStream private[sync] (val index: String, intervalMs: Long, maxErrors: Int) {
  private val logger = LoggerFactory.getLogger(getClass)
  @volatile private var stopping = false
  private val lock = new Object

  /** Ends the stream after the sync it is running, if any; returns at once. */
  def stop(): Unit = {
    stopping = true
    lock.synchronized(lock.notifyAll())
  }

  /**
   * Runs `sync` until the stream ends; returns what the syncs that committed did (at most the
   * last [[CompanionStreams.KeptResults]]), or, when none did, the last sync's result.
   *
   * @param contextStopped whether the Spark context stopped
   */
  private[sync] def run(sync: () => SyncResult, contextStopped: () => Boolean): Seq[SyncResult] = {
    var committed = Vector.empty[SyncResult]
    var last: Option[SyncResult] = None
    var failures = 0
    def ended = stopping || Thread.currentThread().isInterrupted || contextStopped()
    while (!ended) {
      try {
        val r = sync()
        failures = 0
        last = Some(r)
        if (r.version.isDefined)
          committed = (committed :+ r).takeRight(CompanionStreams.KeptResults)
      } catch {
        case e: InterruptedException =>
          Thread.currentThread().interrupt()
          logger.info(s"The companion stream of $index was interrupted: $e")
        // Its Spark job cancelled (PySpark's Ctrl-C cancels every job, as does the UI's kill):
        // the sync committed nothing, and the stream ends as asked.
        case NonFatal(e) if CompanionStreams.jobCancelled(e) =>
          stopping = true
          logger.info(s"The companion stream of $index ended: its sync's job was cancelled ($e)")
        case NonFatal(e) if last.isEmpty && failures == 0 && committed.isEmpty => throw e
        case NonFatal(e) if !ended =>
          failures += 1
          if (failures >= maxErrors) throw e
          logger.warn(
            s"Sync $failures in a row of the companion stream of $index failed; " +
              "retrying after a longer wait",
            e)
        case NonFatal(e) =>
          logger.info(s"The companion stream of $index stopped during a sync: $e")
      }
      if (!ended) pause(intervalMs * math.min(16L, 1L << failures))
    }
    if (committed.nonEmpty) committed else last.toSeq
  }

  /** Waits `ms`, or until stopped or interrupted. */
  private def pause(ms: Long): Unit = {
    val until = System.currentTimeMillis() + ms
    lock.synchronized {
      var left = ms
      while (!stopping && left > 0) {
        try lock.wait(math.min(left, 1000L))
        catch {
          case _: InterruptedException =>
            Thread.currentThread().interrupt()
            return
        }
        left = until - System.currentTimeMillis()
      }
    }
  }
}

/**
 * The companion streams running in this application, by index location (driver side): one per
 * index, so two streams never race to sync it.
 */
object CompanionStreams {

  /** How many committing syncs' results a stream returns when it ends (the last ones). */
  val KeptResults = 1000

  private val active = new ConcurrentHashMap[String, CompanionStream]()

  /**
   * Runs a stream of `sync` over `index` on this thread until it ends; fails at once when
   * another stream syncs the index.
   */
  def run(
      index: String,
      intervalMs: Long,
      maxErrors: Int,
      contextStopped: () => Boolean)(sync: () => SyncResult): Seq[SyncResult] = {
    val stream = new CompanionStream(index, intervalMs, maxErrors)
    if (active.putIfAbsent(index, stream) != null) {
      throw IndexTablesErrors.companionStreamActive(index)
    }
    try stream.run(sync, contextStopped)
    finally active.remove(index, stream)
  }

  /** Whether `e` is, or was caused by, Spark's failure of a job that was cancelled. */
  private[sync] def jobCancelled(e: Throwable): Boolean =
    Iterator.iterate(e)(_.getCause).takeWhile(_ != null).take(10).exists {
      case s: SparkException => Option(s.getMessage).exists(CancelledJob.findFirstIn(_).isDefined)
      case _ => false
    }

  /** How Spark's scheduler words the failure of a cancelled job (`SparkCoreErrors`). */
  private val CancelledJob = """^Job \d+ cancelled\b""".r

  /** Stops the stream over `index` (a qualified location); whether one was running. */
  def stop(index: String): Boolean = Option(active.get(index)).map(_.stop()).isDefined

  /** The locations of the indexes that streams sync now. */
  def indexes: Seq[String] = active.keySet().asScala.toSeq.sorted
}

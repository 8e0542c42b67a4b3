package io.indextables.spark.purge

import java.util.concurrent.ConcurrentHashMap
import java.util.concurrent.atomic.AtomicLong

import scala.util.control.NonFatal

import org.slf4j.LoggerFactory

import io.indextables.spark.config.IndexTablesConf._
import io.indextables.spark.config.IndexTablesOptions
import io.indextables.spark.transaction.TransactionLog

/**
 * Purge-on-write (upstream's `purgeOnWrite.*` keys): with `purgeOnWrite.enabled`, every
 * `triggerAfterWrites`-th write to a table from this driver purges it after its commit, with the
 * `purgeOnWrite.*` retentions. The write has committed by then: a purge failure is logged, never
 * thrown. Settings are checked before the write ([[validate]]), so a retention below the minimum
 * fails the write before anything is written. Thread-safe.
 */
object PurgeOnWrite {

  private val logger = LoggerFactory.getLogger(getClass)

  // Writes per table path since the last purge-on-write, in this driver.
  private val writes = new ConcurrentHashMap[String, AtomicLong]()

  /** Fails, before a write, when purge-on-write is on with a retention below the minimum. */
  def validate(opts: IndexTablesOptions): Unit =
    if (opts.get(PurgeOnWriteEnabled)) PurgeSettings.forWrite(opts)

  /** After a committed write: purges the table when this write is the N-th. */
  def afterWrite(log: TransactionLog, opts: IndexTablesOptions): Option[SplitPurge.Result] = {
    val every = opts.get(PurgeOnWriteTriggerAfterWrites)
    if (!opts.get(PurgeOnWriteEnabled) || every <= 0) None
    else {
      val count = writes.computeIfAbsent(log.tablePath.toString, _ => new AtomicLong())
      if (count.incrementAndGet() < every) None
      else {
        count.set(0)
        purge(log, opts, "write")
      }
    }
  }

  /** After a merge commits (merge-on-write): purges when `purgeOnWrite.triggerAfterMerge`. */
  def afterMerge(log: TransactionLog, opts: IndexTablesOptions): Option[SplitPurge.Result] =
    if (opts.get(PurgeOnWriteEnabled) && opts.get(PurgeOnWriteTriggerAfterMerge))
      purge(log, opts, "merge")
    else None

  private def purge(log: TransactionLog, opts: IndexTablesOptions, after: String) =
    try Some(SplitPurge.run(log, PurgeSettings.forWrite(opts)))
    catch {
      case NonFatal(e) =>
        logger.warn(s"Purge after a $after of ${log.tablePath} failed; the $after is committed", e)
        None
    }
}

package io.indextables.spark.purge

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.IndexTablesConf._
import io.indextables.spark.config.IndexTablesOptions

/** Resolves a purge's settings from the `purge.*` and `purgeOnWrite.*` keys. Driver side. */
object PurgeSettings {

  /**
   * The settings of `PURGE INDEXTABLE`: `olderThanHours` (OLDER THAN) over
   * `purge.defaultRetentionHours`; `txLogRetentionHours` (TRANSACTION LOG RETENTION) over the
   * log's `purge.txLogRetentionHours`. A split retention below `purge.minRetentionHours` fails
   * while `purge.retentionCheckEnabled` is true.
   */
  def forCommand(
      opts: IndexTablesOptions,
      olderThanHours: Option[Long],
      txLogRetentionHours: Option[Long],
      dryRun: Boolean): SplitPurge.Settings = {
    val split = olderThanHours.getOrElse(opts.get(PurgeDefaultRetentionHours))
    check(opts, "split retention (OLDER THAN)", split)
    SplitPurge.Settings(split, txLogRetentionHours, dryRun, opts.get(PurgeMaxFilesToDelete))
  }

  /** The settings of a purge-on-write, checked as [[forCommand]] checks its own. */
  def forWrite(opts: IndexTablesOptions): SplitPurge.Settings = {
    val split = opts.get(PurgeOnWriteSplitRetentionHours)
    check(opts, "on write split retention (purgeOnWrite.splitRetentionHours)", split)
    SplitPurge.Settings(
      split,
      Some(opts.get(PurgeOnWriteTxLogRetentionHours)),
      dryRun = false,
      opts.get(PurgeMaxFilesToDelete))
  }

  private def check(opts: IndexTablesOptions, what: String, hours: Long): Unit = {
    val min = opts.get(PurgeMinRetentionHours)
    if (opts.get(PurgeRetentionCheckEnabled) && hours < min) {
      throw IndexTablesErrors.purgeRetentionTooShort(what, hours, min)
    }
  }
}

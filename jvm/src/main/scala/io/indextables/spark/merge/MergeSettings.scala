package io.indextables.spark.merge

import io.indextables.spark.config.{IndexTablesConf, IndexTablesOptions}

/** How merges run, from the `spark.indextables.merge.*` and `skippedFiles.*` keys. */
final case class MergeSettings(
    heapSize: Long,
    tempDirectory: String,
    maxSourceSplitsPerMerge: Int,
    trackSkips: Boolean,
    cooldownHours: Long,
    deletedRowsThreshold: Double = 0.2)

object MergeSettings {
  def apply(opts: IndexTablesOptions): MergeSettings = MergeSettings(
    heapSize = opts.get(IndexTablesConf.MergeHeapSize),
    tempDirectory = opts.get(IndexTablesConf.MergeTempDirectory),
    maxSourceSplitsPerMerge = opts.get(IndexTablesConf.MergeMaxSourceSplitsPerMerge),
    trackSkips = opts.get(IndexTablesConf.SkippedFilesTracking),
    cooldownHours = opts.get(IndexTablesConf.SkippedFilesCooldownHours),
    deletedRowsThreshold = opts.get(IndexTablesConf.MergeDeletedRowsThreshold)
  )
}

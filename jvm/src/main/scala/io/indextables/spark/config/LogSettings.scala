package io.indextables.spark.config

/**
 * The settings the transaction log works with, as plain values. The log reads no configuration
 * itself: the caller resolves the `spark.indextables.*` keys (see
 * [[IndexTablesOptions.logSettings]]) and hands the result to
 * `transaction.TransactionLog.forTable`. Immutable.
 */
final case class LogSettings(
    retryMaxAttempts: Int,
    retryBaseDelayMs: Long,
    retryMaxDelayMs: Long,
    compression: Boolean,
    checkpointEnabled: Boolean,
    checkpointInterval: Int,
    checkpointActionsPerPart: Int,
    stateFormat: String,
    stateCompression: String,
    stateCompressionLevel: Int,
    stateEntriesPerManifest: Int,
    stateReadParallelism: Int,
    stateRetryMaxAttempts: Int,
    stateRetryBaseDelayMs: Long,
    stateRetryMaxDelayMs: Long,
    compactionTombstoneThreshold: Double,
    compactionMaxManifests: Int,
    schemaRenormalizeThreshold: Int,
    txLogRetentionHours: Long,
    stateRetentionVersions: Int,
    stateRetentionHours: Long,
    minManifestAgeHours: Long)

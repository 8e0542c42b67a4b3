package io.indextables.spark.config

import java.util.Locale

import scala.util.Try

/**
 * Every `spark.indextables.*` key the plugin reads, defined once with its type, default,
 * validation and doc (names as in the seeds' `protocol.md` and upstream IndexTables). Values are
 * read through [[IndexTablesOptions]], which implements the precedence once: a read/write option
 * beats the session configuration, which beats a property recorded in the table, which beats the
 * default. Keys compare ignoring case in every layer.
 */
object IndexTablesConf {
  import ConfEntry._

  // Writes and reads

  val MaxRowsPerSplit: ConfEntry[Long] = long(
    "spark.indextables.maxRowsPerSplit",
    1000000L,
    "Rows after which a writer task finishes its split and starts a new one.",
    min = 1L)

  val WriterHeapSize: ConfEntry[Long] = bytes(
    "spark.indextables.indexWriter.heapSize",
    268435456L,
    "Bytes of indexing heap for each native index writer (one per partition being written), " +
      "as a number or with a unit (100M, 1G); tantivy takes 15,000,000 at least, and a split " +
      "is flushed as a further segment (merged before the split is packed) each time the heap " +
      "fills.",
    min = 15000000L,
    max = Int.MaxValue.toLong
  )

  val ArrowBatchRows: ConfEntry[Int] = int(
    "spark.indextables.write.arrow.batchSize",
    8192,
    "Rows per Arrow batch exported to the native writer, and per batch of documents; " +
      "upstream's name spark.indextables.write.arrowFfi.batchSize is read too.",
    min = 1
  ).withAliases("spark.indextables.write.arrowFfi.batchSize")

  val MergeSchema: ConfEntry[Boolean] = boolean(
    "spark.indextables.write.mergeSchema",
    false,
    "Whether an append may add new columns to the table (as the write option mergeSchema, " +
      "which wins); they are nullable, and older splits read them as NULL."
  ).withAliases("mergeSchema")

  val WriteLayout: ConfEntry[String] = oneOf(
    "spark.indextables.write.layout",
    "splits",
    "How a new table stores its rows: splits (each split holds the index and the rows, in " +
      "tantivy's document store) or companion (each write task writes its rows as a Parquet " +
      "file and an index-only split over it; rows are read from Parquet). Chosen when the " +
      "table is created and recorded in its log; a write to an existing table that asks for " +
      "the other layout fails.",
    Seq("splits", "companion")
  )

  val StrictOptions: ConfEntry[Boolean] = boolean(
    "spark.indextables.write.strictOptions",
    true,
    "Whether a write fails on a spark.indextables.* option it does not know (naming the " +
      "close matches) instead of ignoring it."
  )

  // Optimized writes (names and defaults as upstream documents them)

  val OptimizeWriteEnabled: ConfEntry[Boolean] = boolean(
    "spark.indextables.write.optimizeWrite.enabled",
    false,
    "Whether a write asks Spark for a shuffle before it (RequiresDistributionAndOrdering) so " +
      "that each task writes splits near write.optimizeWrite.targetSplitSize."
  )

  val OptimizeWriteTargetSplitSize: ConfEntry[Long] = bytes(
    "spark.indextables.write.optimizeWrite.targetSplitSize",
    1L << 30,
    "The on-disk split size an optimized write aims at (512M, 1G, ...).",
    min = 1L,
    max = Long.MaxValue
  )

  val OptimizeWriteDistributionMode: ConfEntry[String] = oneOf(
    "spark.indextables.write.optimizeWrite.distributionMode",
    "hash",
    "hash (clustered on the partition columns, or the first column, which AQE may rebalance), " +
      "balanced (exactly defaultParallelism tasks, splits rolled at maxSplitSize) or none (no " +
      "shuffle).",
    Seq("hash", "balanced", "none")
  )

  val OptimizeWriteMaxSplitSize: ConfEntry[Long] = bytes(
    "spark.indextables.write.optimizeWrite.maxSplitSize",
    4L << 30,
    "The largest on-disk split an optimized write makes before it rolls to a new one (it " +
      "rolls at 97% of it, estimated from the table's bytes per row, once it has history).",
    min = 1L,
    max = Long.MaxValue
  )

  val OptimizeWriteSamplingRatio: ConfEntry[Double] = double(
    "spark.indextables.write.optimizeWrite.samplingRatio",
    1.1,
    "Shuffle bytes per on-disk split byte a table's first optimized write assumes, used only " +
      "when set: the advisory shuffle partition size is then targetSplitSize times this. Unset, " +
      "it is targetSplitSize over the split bytes per shuffle byte measured for the table's " +
      "layout (WriteSizeEstimator.splitBytesPerShuffleByte).",
    min = 0.001
  )

  val OptimizeWriteMinRowsForEstimation: ConfEntry[Long] = long(
    "spark.indextables.write.optimizeWrite.minRowsForEstimation",
    10000L,
    "Rows the table must hold before its bytes per row size an optimized write.",
    min = 1L
  )

  val ReadBatchSize: ConfEntry[Int] = int(
    "spark.indextables.read.batchSize",
    2048,
    "Documents fetched from a split per native retrieval call.",
    min = 1)

  val DriverSearchMaxRows: ConfEntry[Int] = int(
    "spark.indextables.read.driverSearch.maxRows",
    1000,
    "A search whose answer is at most this many rows is answered on the driver, with no Spark " +
      "job (which costs more than a small search): one with a LIMIT this small, or over splits " +
      "holding no more rows, always; any other search with a query is tried there first, and " +
      "goes to tasks as soon as its matches pass this many. 0 never does. The splits are at " +
      "most read.aggregate.driverMaxSplits, as for aggregations answered on the driver.",
    min = 0
  )

  // Streaming reads (readStream.format("indextables"); Delta's option names are read too)

  val StreamStartingVersion: ConfEntry[String] = ConfEntry(
    "spark.indextables.read.stream.startingVersion",
    "",
    "Where a stream of the table's new rows starts (as the read option startingVersion): a " +
      "version number (its changes and every later version's), or latest (only versions " +
      "committed after the stream starts). Unset, the stream's first batch is the table as it " +
      "stands, then each new version's rows. Read when a stream starts without a checkpoint.",
    "a non-negative version number or latest"
  )(s =>
    s.trim.toLowerCase(Locale.ROOT) match {
      case "" => Some("") // unset
      case "latest" => Some("latest")
      case n => Try(n.toLong).toOption.filter(_ >= 0).map(_.toString)
    }).withAliases("startingVersion")

  val StreamMaxFilesPerTrigger: ConfEntry[Int] = int(
    "spark.indextables.read.stream.maxFilesPerTrigger",
    1000,
    "Splits a micro-batch of a stream of the table's new rows reads at most (as the read " +
      "option maxFilesPerTrigger); a version's splits may span batches. Trigger.Once reads all.",
    min = 1
  ).withAliases("maxFilesPerTrigger")

  val StreamSkipChangeCommits: ConfEntry[Boolean] = boolean(
    "spark.indextables.read.stream.skipChangeCommits",
    false,
    "Whether a stream of the table's new rows skips the versions that removed or rewrote rows " +
      "(an overwrite, replaceWhere, DROP PARTITIONS, DELETE, UPDATE, MERGE), their new rows " +
      "included, as Delta's option skipChangeCommits, instead of failing on them."
  ).withAliases("skipChangeCommits")

  val SplitsPerTask: ConfEntry[String] = ConfEntry(
    "spark.indextables.read.splitsPerTask",
    "auto",
    "Splits one read task searches, one after the other: a positive integer, or auto (one " +
      "split per task while there are no more splits than cores; else the splits are spread " +
      "over whole rounds of tasks on every core, at most read.maxSplitsPerTask each).",
    "auto or a positive integer"
  )(s =>
    s.trim.toLowerCase(Locale.ROOT) match {
      case "auto" => Some("auto")
      case n => Try(n.toInt).toOption.filter(_ >= 1).map(_.toString)
    })

  val MaxSplitsPerTask: ConfEntry[Int] = int(
    "spark.indextables.read.maxSplitsPerTask",
    8,
    "The most splits one read task searches when read.splitsPerTask is auto.",
    min = 1)

  val CompanionMaxSourceVersionLag: ConfEntry[Long] = long(
    "spark.indextables.read.companion.maxSourceVersionLag",
    -1L,
    "For a companion index of a Delta or Iceberg table: a read fails " +
      "(INDEXTABLES_COMPANION_INDEX_STALE) when the table's latest version is more than this " +
      "many versions past the one the index was last synced to (for Iceberg, snapshots along " +
      "the table's history; one no longer in it is too far); 0 asks for an index in step with " +
      "its source. -1 (the default): no check, the read answers as of the last sync.",
    min = -1L
  )

  val CompanionStreamMaxConsecutiveErrors: ConfEntry[Int] = int(
    "spark.indextables.companion.stream.maxConsecutiveErrors",
    10,
    "BUILD INDEXTABLES COMPANION ... WITH STREAMING POLL INTERVAL: how many syncs in a row may " +
      "fail (each retried after a longer wait: the interval times 2, 4, ... up to 16) before " +
      "the stream stops with the last error. A failed first sync stops it at once.",
    min = 1
  )

  val CacheMaxSize: ConfEntry[Long] = long(
    "spark.indextables.cache.maxSize",
    268435456L,
    "Bytes of the executor-wide split cache (footers and index pages).",
    min = 1L)

  val QueryCacheEnabled: ConfEntry[Boolean] = boolean(
    "spark.indextables.cache.queryCache.enabled",
    true,
    "Whether tantivy's leaf-search cache may answer a search or aggregation repeated on a " +
      "split. Off, every request searches (for benchmarks and cold-query timing)."
  )

  val DiskCacheEnabled: ConfEntry[String] = oneOf(
    "spark.indextables.cache.disk.enabled",
    "auto",
    "Whether reads keep split components fetched from object storage in an L2 disk cache " +
      "(tantivy4java's tiered cache). auto: on when cache.disk.path is set or the node has " +
      "/local_disk0 (Databricks, EMR).",
    Seq("auto", "true", "false")
  )

  val DiskCachePath: ConfEntry[String] = ConfEntry(
    "spark.indextables.cache.disk.path",
    "",
    "Directory of the L2 disk cache (default: /local_disk0/indextables_cache where that disk " +
      "exists, else indextables-disk-cache under java.io.tmpdir).",
    "an absolute directory path"
  )(s => Some(s.trim).filter(p => p.isEmpty || new java.io.File(p).isAbsolute))

  val DiskCacheMaxSize: ConfEntry[Long] = bytes(
    "spark.indextables.cache.disk.maxSize",
    0L,
    "Most bytes the L2 disk cache keeps (K/M/G/T suffixes); 0: two thirds of the disk's space.",
    min = 0L,
    max = Long.MaxValue
  )

  val DiskCacheCompression: ConfEntry[String] = oneOf(
    "spark.indextables.cache.disk.compression",
    "lz4",
    "How the L2 disk cache compresses what it keeps.",
    Seq("lz4", "zstd", "none"))

  val DiskCacheMinCompressSize: ConfEntry[Long] = bytes(
    "spark.indextables.cache.disk.minCompressSize",
    4096L,
    "Smallest piece the L2 disk cache compresses.",
    min = 0L,
    max = Int.MaxValue.toLong)

  val DiskCacheManifestSyncInterval: ConfEntry[Int] = int(
    "spark.indextables.cache.disk.manifestSyncInterval",
    30,
    "Seconds between writes of the L2 disk cache's manifest (what survives a JVM restart).",
    min = 1
  )

  val RequireAggregatePushdown: ConfEntry[Boolean] = boolean(
    "spark.indextables.read.requireAggregatePushdown",
    false,
    "Whether an aggregate over a table that the splits (or the log) cannot answer exactly " +
      "fails, naming why, instead of being aggregated by Spark from the rows."
  )

  /** The split limit of [[AggregateDriverMaxSplits]] on a cluster when it is -1. */
  val DefaultDriverMaxSplits = 32

  val AggregateDriverMaxSplits: ConfEntry[Int] = int(
    "spark.indextables.read.aggregate.driverMaxSplits",
    -1,
    "A pushed aggregation over at most this many splits is answered on the driver (the splits' " +
      "aggregations on parallel threads, merged there) without a Spark job; 0 never does. -1 " +
      s"(the default): $DefaultDriverMaxSplits on a cluster, and any number in local mode, " +
      "where tasks would run in the driver's JVM on the same cores.",
    min = -1
  )

  val StatsTruncationMaxLength: ConfEntry[Int] = int(
    "spark.indextables.stats.truncation.maxLength",
    32,
    "Characters kept of string min/max statistics; longer values are truncated.",
    min = 1)

  // How a write indexes its columns (upstream's keys): column lists and per-column suffixes,
  // read by schema/IndexingRequest only, which resolves them over the same layers.

  /** The prefix of every key of how a table indexes its columns. */
  val IndexingPrefix: String = "spark.indextables.indexing."

  /** `typemap.<column>` = string | text | json | ip, or `typemap.<type>` = a column list. */
  val IndexingTypemapPrefix: String = IndexingPrefix + "typemap."

  /** `tokenizer.<column>` = a tokenizer, or `tokenizer.<tokenizer>` = a column list. */
  val IndexingTokenizerPrefix: String = IndexingPrefix + "tokenizer."

  /** Columns that are fast fields. */
  val IndexingFastFields: String = IndexingPrefix + "fastfields"

  /** Columns that are not fast fields. */
  val IndexingNonFastFields: String = IndexingPrefix + "nonfastfields"

  /** Columns stored but not indexed. */
  val IndexingStoreOnlyFields: String = IndexingPrefix + "storeonlyfields"

  /** Columns indexed but not stored. */
  val IndexingIndexOnlyFields: String = IndexingPrefix + "indexonlyfields"

  /** The indexing keys that name a list of columns. */
  val indexingListKeys: Seq[String] =
    Seq(IndexingFastFields, IndexingNonFastFields, IndexingStoreOnlyFields, IndexingIndexOnlyFields)

  /** The indexing keys that end in a column or a type name. */
  val indexingPrefixes: Seq[String] = Seq(IndexingTypemapPrefix, IndexingTokenizerPrefix)

  // Transaction log (read into a LogSettings value)

  val RetryMaxAttempts: ConfEntry[Int] = int(
    "spark.indextables.transaction.retry.maxAttempts",
    10,
    "Maximum attempts of a commit that conflicts with other writers.",
    min = 1)

  val RetryBaseDelayMs: ConfEntry[Long] = long(
    "spark.indextables.transaction.retry.baseDelayMs",
    100L,
    "Base delay of the exponential backoff between commit attempts.",
    min = 0L)

  val RetryMaxDelayMs: ConfEntry[Long] = long(
    "spark.indextables.transaction.retry.maxDelayMs",
    5000L,
    "Maximum delay between commit attempts.",
    min = 0L)

  val TransactionCompression: ConfEntry[Boolean] = boolean(
    "spark.indextables.transaction.compression.enabled",
    true,
    "Write transaction log version files gzip-compressed (with the 01 01 header).")

  val CheckpointEnabled: ConfEntry[Boolean] = boolean(
    "spark.indextables.checkpoint.enabled",
    true,
    "Write a checkpoint every checkpoint.interval versions.")

  val CheckpointInterval: ConfEntry[Int] = int(
    "spark.indextables.checkpoint.interval",
    10,
    "Versions between checkpoints.",
    min = 1)

  val CheckpointActionsPerPart: ConfEntry[Int] = int(
    "spark.indextables.checkpoint.actionsPerPart",
    100000,
    "Actions per part of a JSON checkpoint; more actions make it multi-part.",
    min = 1)

  val StateFormat: ConfEntry[String] = oneOf(
    "spark.indextables.state.format",
    "avro",
    "Checkpoint format: avro (the Avro state, V4) or json.",
    Seq("avro", "json"))

  val StateCompression: ConfEntry[String] = oneOf(
    "spark.indextables.state.compression",
    "zstd",
    "Codec of the Avro state files: zstd, snappy or none.",
    Seq("zstd", "snappy", "none"))

  val StateCompressionLevel: ConfEntry[Int] = int(
    "spark.indextables.state.compressionLevel",
    3,
    "Compression level of the zstd codec (1-22).",
    min = 1)

  val StateEntriesPerManifest: ConfEntry[Int] = int(
    "spark.indextables.state.entriesPerManifest",
    50000,
    "Most file entries per Avro manifest.",
    min = 1)

  val StateReadParallelism: ConfEntry[Int] = int(
    "spark.indextables.state.read.parallelism",
    8,
    "Manifests read concurrently when loading an Avro state.",
    min = 1)

  val StateRetryMaxAttempts: ConfEntry[Int] = int(
    "spark.indextables.state.retry.maxAttempts",
    10,
    "Most attempts to write an Avro state when the state it builds on changes or a write fails.",
    min = 1)

  val StateRetryBaseDelayMs: ConfEntry[Long] = long(
    "spark.indextables.state.retry.baseDelayMs",
    100L,
    "First backoff delay between state write attempts.",
    min = 0L)

  val StateRetryMaxDelayMs: ConfEntry[Long] = long(
    "spark.indextables.state.retry.maxDelayMs",
    5000L,
    "Largest backoff delay between state write attempts.",
    min = 0L)

  val CompactionTombstoneThreshold: ConfEntry[Double] = double(
    "spark.indextables.state.compaction.tombstoneThreshold",
    0.10,
    "Tombstones over entries above which a checkpoint rewrites the state.",
    min = 0.0)

  val CompactionMaxManifests: ConfEntry[Int] = int(
    "spark.indextables.state.compaction.maxManifests",
    20,
    "Manifests above which a checkpoint rewrites the state.",
    min = 1)

  val SchemaRenormalizeThreshold: ConfEntry[Int] = int(
    "spark.indextables.state.schema.renormalizeThreshold",
    5,
    "Distinct docMappingRefs above which a checkpoint re-hashes them canonically.",
    min = 1)

  val TxLogRetentionHours: ConfEntry[Long] = long(
    "spark.indextables.purge.txLogRetentionHours",
    720L,
    "Hours a version file that a checkpoint covers is kept.",
    min = 0L)

  // PURGE INDEXTABLE and purge-on-write (upstream's names and defaults)

  val PurgeDefaultRetentionHours: ConfEntry[Long] = long(
    "spark.indextables.purge.defaultRetentionHours",
    168L,
    "Hours an unreferenced split file is kept when PURGE has no OLDER THAN clause.",
    min = 0L)

  val PurgeMinRetentionHours: ConfEntry[Long] = long(
    "spark.indextables.purge.minRetentionHours",
    24L,
    "The shortest split retention PURGE accepts while purge.retentionCheckEnabled is true.",
    min = 0L)

  val PurgeRetentionCheckEnabled: ConfEntry[Boolean] = boolean(
    "spark.indextables.purge.retentionCheckEnabled",
    true,
    "Whether a split retention below purge.minRetentionHours is an error (it could delete " +
      "the splits of a write still in flight)."
  )

  val PurgeMaxFilesToDelete: ConfEntry[Long] = long(
    "spark.indextables.purge.maxFilesToDelete",
    1000000L,
    "Most split files one PURGE deletes (the oldest first); the next run takes the rest.",
    min = 1L)

  val PurgeOnWriteEnabled: ConfEntry[Boolean] = boolean(
    "spark.indextables.purgeOnWrite.enabled",
    false,
    "Whether writes purge the table after they commit (see purgeOnWrite.triggerAfterWrites).")

  val PurgeOnWriteTriggerAfterMerge: ConfEntry[Boolean] = boolean(
    "spark.indextables.purgeOnWrite.triggerAfterMerge",
    true,
    "Whether a merge-on-write purges the table after it commits.")

  val PurgeOnWriteTriggerAfterWrites: ConfEntry[Int] = int(
    "spark.indextables.purgeOnWrite.triggerAfterWrites",
    0,
    "Purge after every this many writes to a table from this driver (0: never).",
    min = 0)

  val PurgeOnWriteSplitRetentionHours: ConfEntry[Long] = long(
    "spark.indextables.purgeOnWrite.splitRetentionHours",
    168L,
    "Split retention of a purge-on-write (the minimum check applies as to PURGE).",
    min = 0L)

  val PurgeOnWriteTxLogRetentionHours: ConfEntry[Long] = long(
    "spark.indextables.purgeOnWrite.txLogRetentionHours",
    720L,
    "Version-file retention of a purge-on-write.",
    min = 0L)

  val StateRetentionVersions: ConfEntry[Int] = int(
    "spark.indextables.state.retention.versions",
    2,
    "Newest Avro states always kept.",
    min = 1)

  val StateRetentionHours: ConfEntry[Long] = long(
    "spark.indextables.state.retention.hours",
    168L,
    "Hours an older Avro state is kept.",
    min = 0L)

  val MinManifestAgeHours: ConfEntry[Long] = long(
    "spark.indextables.state.gc.minManifestAgeHours",
    1L,
    "Unreferenced manifests younger than this are never deleted.",
    min = 0L)

  // MERGE SPLITS and merge on write (upstream's names and defaults)

  val MergeHeapSize: ConfEntry[Long] = bytes(
    "spark.indextables.merge.heapSize",
    1L << 30,
    "Bytes of native heap each merge of splits may use (MERGE SPLITS and merge on write).",
    min = 15000000L,
    max = Long.MaxValue
  )

  val MergeMaxSourceSplitsPerMerge: ConfEntry[Int] = int(
    "spark.indextables.merge.maxSourceSplitsPerMerge",
    1000,
    "Most source splits one merge combines into one split (MERGE SPLITS ... MAX SOURCE SPLITS " +
      "PER MERGE n wins).",
    min = 2
  )

  val MergeTempDirectory: ConfEntry[String] = setting(
    "spark.indextables.merge.tempDirectoryPath",
    "Executor directory for merged splits before they are uploaded (else java.io.tmpdir).")

  val MergeDeletedRowsThreshold: ConfEntry[Double] = double(
    "spark.indextables.merge.deletedRowsThreshold",
    0.2,
    "MERGE SPLITS rewrites a split with deleted rows (a deletion vector) that is too large to " +
      "merge once this fraction of its rows is deleted; smaller ones it rewrites whenever it " +
      "would merge them. Either way the new split holds no deleted row.",
    min = 0.0
  )

  val SkippedFilesTracking: ConfEntry[Boolean] = boolean(
    "spark.indextables.skippedFiles.trackingEnabled",
    true,
    "Whether a merge that fails records mergeskip actions for its source splits, so that later " +
      "merges leave them alone until the cooldown ends."
  )

  val SkippedFilesCooldownHours: ConfEntry[Long] = long(
    "spark.indextables.skippedFiles.cooldownDuration",
    24L,
    "Hours after a failed merge before its source splits are merged again (mergeskip " +
      "retryAfter).",
    min = 0L
  )

  val MergeOnWriteEnabled: ConfEntry[Boolean] = boolean(
    "spark.indextables.mergeOnWrite.enabled",
    false,
    "Whether a write, once committed, starts a merge of the table's small splits when there are " +
      "enough of them (see DESCRIBE INDEXTABLES MERGE JOBS)."
  )

  val MergeOnWriteAsync: ConfEntry[Boolean] = boolean(
    "spark.indextables.mergeOnWrite.async.enabled",
    true,
    "Whether merge on write runs in a background thread of the driver (the writer returns at " +
      "once) rather than before the write returns."
  )

  val MergeOnWriteTargetSize: ConfEntry[Long] = bytes(
    "spark.indextables.mergeOnWrite.targetSize",
    4L << 30,
    "Target size of the splits merge on write makes, as a number or with a unit (100M, 4G).",
    min = 1L,
    max = Long.MaxValue
  )

  val MergeOnWriteMergeFactor: ConfEntry[Int] = int(
    "spark.indextables.mergeOnWrite.mergeFactor",
    10,
    "How many splits of one size tier merge on write merges at once (at least): the tiers end " +
      "at targetSize / mergeFactor^3, ^2 and ^1 (the top tier, above, packs toward the target " +
      "as MERGE SPLITS does), so a row is rewritten about once per tier. At most " +
      "merge.maxSourceSplitsPerMerge.",
    min = 2
  )

  val MergeOnWriteBatchCpuFraction: ConfEntry[Double] = double(
    "spark.indextables.mergeOnWrite.batchCpuFraction",
    0.167,
    "Fraction of the cluster's cores (defaultParallelism) that one batch of merge groups uses; " +
      "a batch is at least one group.",
    min = 0.0
  )

  val MergeOnWriteMinBatchesToTrigger: ConfEntry[Int] = int(
    "spark.indextables.mergeOnWrite.minBatchesToTrigger",
    1,
    "Merge on write starts when the table has at least this many batches of merge groups.",
    min = 1)

  val MergeOnWriteMaxConcurrentBatches: ConfEntry[Int] = int(
    "spark.indextables.mergeOnWrite.maxConcurrentBatches",
    3,
    "Most merge-on-write jobs that run at once in this driver; a write that would start " +
      "another, or one on a table already being merged, starts none, and its table is looked " +
      "at again when a merge ends.",
    min = 1
  )

  // Object stores (upstream's names). Options and session settings only: never read from a
  // table's recorded properties, so credentials are never written into a log. The driver writes
  // the resolved values into the Hadoop configuration under these names; the stores read them
  // back through the same entries (storage/StorageConf), on the driver and the executors.

  // A free-form setting; empty (the default) means not set.
  private def setting(key: String, doc: String): ConfEntry[String] =
    ConfEntry(key, "", doc, "a string")(s => Some(s.trim))

  val AwsAccessKey: ConfEntry[String] = setting(
    "spark.indextables.aws.accessKey",
    "S3 access key id (else fs.s3a.access.key, else a provider).")
  val AwsSecretKey: ConfEntry[String] =
    setting("spark.indextables.aws.secretKey", "S3 secret access key (secret: never shown).")
  val AwsSessionToken: ConfEntry[String] = setting(
    "spark.indextables.aws.sessionToken",
    "S3 session token for temporary credentials (secret).")
  val AwsRegion: ConfEntry[String] = setting(
    "spark.indextables.aws.region",
    "S3 region (else fs.s3a.endpoint.region, else the SDK's default chain, else us-east-1).")
  val AwsEndpoint: ConfEntry[String] = setting(
    "spark.indextables.aws.endpoint",
    "S3 endpoint URL, for S3-compatible stores (else fs.s3a.endpoint); upstream's " +
      "spark.indextables.s3.endpoint too."
  ).withAliases("spark.indextables.s3.endpoint")
  val AwsPathStyleAccess: ConfEntry[Boolean] = boolean(
    "spark.indextables.aws.pathStyleAccess",
    false,
    "Whether S3 requests name the bucket in the path rather than the host name (else " +
      "fs.s3a.path.style.access); upstream's spark.indextables.s3.pathStyleAccess too."
  ).withAliases("spark.indextables.s3.pathStyleAccess")
  val AwsCredentialsProviderClass: ConfEntry[String] = setting(
    "spark.indextables.aws.credentialsProviderClass",
    "An AWS SDK v2 AwsCredentialsProvider class (static create() or no-argument constructor), " +
      "instantiated on each JVM that reaches S3, used when no keys are given."
  )
  val S3PartSize: ConfEntry[Long] = bytes(
    "spark.indextables.s3.partSize",
    64L << 20,
    "Size of each part of a multipart upload of a split to S3 (S3's minimum is 5M).",
    min = 5L << 20,
    max = Int.MaxValue.toLong
  )
  val S3MultipartThreshold: ConfEntry[Long] = bytes(
    "spark.indextables.s3.multipartThreshold",
    S3PartSize.default,
    "Split files at least this large are uploaded to S3 in parts (when not set: s3.partSize).",
    min = 5L << 20,
    max = Long.MaxValue
  )
  val S3MaxConcurrency: ConfEntry[Int] =
    int("spark.indextables.s3.maxConcurrency", 4, "Parts of one S3 upload sent at once.", min = 1)
  val AzureAccountName: ConfEntry[String] = setting(
    "spark.indextables.azure.accountName",
    "Azure storage account (else the path's host).")
  val AzureAccountKey: ConfEntry[String] = setting(
    "spark.indextables.azure.accountKey",
    "Azure storage account key (secret); else fs.azure.account.key.<account>.*.")
  val AzureConnectionString: ConfEntry[String] = setting(
    "spark.indextables.azure.connectionString",
    "Azure storage connection string (secret): account, key and endpoint in one.")
  val AzureTenantId: ConfEntry[String] =
    setting("spark.indextables.azure.tenantId", "Service principal's tenant id.")
  val AzureClientId: ConfEntry[String] =
    setting("spark.indextables.azure.clientId", "Service principal's client (application) id.")
  val AzureClientSecret: ConfEntry[String] = setting(
    "spark.indextables.azure.clientSecret",
    "Service principal's client secret (secret).")
  val AzureBearerToken: ConfEntry[String] = setting(
    "spark.indextables.azure.bearerToken",
    "An OAuth bearer token for Azure Storage (secret).")
  val AzureBlockSize: ConfEntry[Long] = bytes(
    "spark.indextables.azure.blockSize",
    8L << 20,
    "Block size of staged uploads and of ranged downloads of Azure blobs.",
    min = 1L << 20,
    max = 4000L << 20
  )
  val AzureMaxConcurrency: ConfEntry[Int] = int(
    "spark.indextables.azure.maxConcurrency",
    4,
    "Blocks of one Azure transfer in flight.",
    min = 1)
  val SplitCacheDirectory: ConfEntry[String] = setting(
    "spark.indextables.cache.directoryPath",
    "Directory for local copies of splits from stores tantivy4java cannot read (Azure, HDFS) " +
      "(else java.io.tmpdir)."
  )
  val SplitCacheMaxSize: ConfEntry[Long] = bytes(
    "spark.indextables.splitCache.maxSize",
    10L << 30,
    "Most bytes of local split copies kept per JVM, least recently used deleted first.",
    min = 0L,
    max = Long.MaxValue
  )
  val DeletedValuesCacheMaxSize: ConfEntry[Long] = bytes(
    "spark.indextables.cache.deletedValues.maxSize",
    128L << 20,
    "Most bytes (estimated) of deleted docs' values that pushed aggregations over splits with " +
      "deletion vectors keep per JVM, by split, vector and column, so that a later aggregation " +
      "of a split fetches only the columns none read before; least recently used dropped " +
      "first; 0 keeps none.",
    min = 0L,
    max = Long.MaxValue
  )

  /** Settings whose values are secrets: never printed, logged or recorded. */
  val Secrets: Seq[ConfEntry[String]] = Seq(
    AwsSecretKey,
    AwsSessionToken,
    AzureAccountKey,
    AzureConnectionString,
    AzureClientSecret,
    AzureBearerToken)

  /** Hadoop's own names of secrets the stores read as fallbacks. */
  val HadoopSecrets: Seq[String] = Seq("fs.s3a.secret.key", "fs.s3a.session.token")

  /** Whether the setting `key` holds a secret (compared ignoring case). */
  def isSecret(key: String): Boolean = {
    val k = key.toLowerCase(Locale.ROOT)
    (Secrets.flatMap(e => e.key +: e.aliases) ++ HadoopSecrets)
      .exists(_.toLowerCase(Locale.ROOT) == k) ||
    k.startsWith("fs.azure.account.key.") || k.startsWith("fs.azure.sas.")
  }

  /** The object-store entries, which travel to the executors in the Hadoop configuration. */
  val storageEntries: Seq[ConfEntry[_]] = Seq(
    AwsAccessKey,
    AwsSecretKey,
    AwsSessionToken,
    AwsRegion,
    AwsEndpoint,
    AwsPathStyleAccess,
    AwsCredentialsProviderClass,
    S3PartSize,
    S3MultipartThreshold,
    S3MaxConcurrency,
    AzureAccountName,
    AzureAccountKey,
    AzureConnectionString,
    AzureTenantId,
    AzureClientId,
    AzureClientSecret,
    AzureBearerToken,
    AzureBlockSize,
    AzureMaxConcurrency,
    SplitCacheDirectory,
    SplitCacheMaxSize,
    DeletedValuesCacheMaxSize
  )

  /** Every entry, in the order above. */
  val allEntries: Seq[ConfEntry[_]] = Seq(
    MaxRowsPerSplit,
    WriterHeapSize,
    ArrowBatchRows,
    MergeSchema,
    WriteLayout,
    StrictOptions,
    OptimizeWriteEnabled,
    OptimizeWriteTargetSplitSize,
    OptimizeWriteDistributionMode,
    OptimizeWriteMaxSplitSize,
    OptimizeWriteSamplingRatio,
    OptimizeWriteMinRowsForEstimation,
    ReadBatchSize,
    DriverSearchMaxRows,
    StreamStartingVersion,
    StreamMaxFilesPerTrigger,
    StreamSkipChangeCommits,
    SplitsPerTask,
    MaxSplitsPerTask,
    CompanionMaxSourceVersionLag,
    CompanionStreamMaxConsecutiveErrors,
    CacheMaxSize,
    QueryCacheEnabled,
    DiskCacheEnabled,
    DiskCachePath,
    DiskCacheMaxSize,
    DiskCacheCompression,
    DiskCacheMinCompressSize,
    DiskCacheManifestSyncInterval,
    RequireAggregatePushdown,
    AggregateDriverMaxSplits,
    StatsTruncationMaxLength,
    RetryMaxAttempts,
    RetryBaseDelayMs,
    RetryMaxDelayMs,
    TransactionCompression,
    CheckpointEnabled,
    CheckpointInterval,
    CheckpointActionsPerPart,
    StateFormat,
    StateCompression,
    StateCompressionLevel,
    StateEntriesPerManifest,
    StateReadParallelism,
    StateRetryMaxAttempts,
    StateRetryBaseDelayMs,
    StateRetryMaxDelayMs,
    CompactionTombstoneThreshold,
    CompactionMaxManifests,
    SchemaRenormalizeThreshold,
    TxLogRetentionHours,
    PurgeDefaultRetentionHours,
    PurgeMinRetentionHours,
    PurgeRetentionCheckEnabled,
    PurgeMaxFilesToDelete,
    PurgeOnWriteEnabled,
    PurgeOnWriteTriggerAfterMerge,
    PurgeOnWriteTriggerAfterWrites,
    PurgeOnWriteSplitRetentionHours,
    PurgeOnWriteTxLogRetentionHours,
    StateRetentionVersions,
    StateRetentionHours,
    MinManifestAgeHours,
    MergeHeapSize,
    MergeMaxSourceSplitsPerMerge,
    MergeTempDirectory,
    MergeDeletedRowsThreshold,
    SkippedFilesTracking,
    SkippedFilesCooldownHours,
    MergeOnWriteEnabled,
    MergeOnWriteAsync,
    MergeOnWriteTargetSize,
    MergeOnWriteMergeFactor,
    MergeOnWriteBatchCpuFraction,
    MergeOnWriteMinBatchesToTrigger,
    MergeOnWriteMaxConcurrentBatches
  ) ++ storageEntries
}

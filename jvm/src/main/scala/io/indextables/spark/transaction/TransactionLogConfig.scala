package io.indextables.spark.transaction

/**
 * The `spark.indextables.*` options that the transaction log reads, each defined once with its
 * default (names as in `protocol.md`). Values come from the options map given to
 * [[TransactionLog.forTable]]; the caller resolves precedence before that.
 */
object TransactionLogConfig {

  /** One option: its key, default and a one-line description. */
  final case class Entry[T](key: String, default: T, doc: String)

  val RetryMaxAttempts: Entry[Int] = Entry(
    "spark.indextables.transaction.retry.maxAttempts", 10,
    "Maximum attempts of a commit that conflicts with other writers")

  val RetryBaseDelayMs: Entry[Long] = Entry(
    "spark.indextables.transaction.retry.baseDelayMs", 100L,
    "Base delay of the exponential backoff between commit attempts")

  val RetryMaxDelayMs: Entry[Long] = Entry(
    "spark.indextables.transaction.retry.maxDelayMs", 5000L,
    "Maximum delay between commit attempts")

  val StateRetryMaxAttempts: Entry[Int] = Entry(
    "spark.indextables.state.retry.maxAttempts", 10,
    "Most attempts to write an Avro state when the state it builds on changes or a write fails")

  val StateRetryBaseDelayMs: Entry[Long] = Entry(
    "spark.indextables.state.retry.baseDelayMs", 100L,
    "First backoff delay between state write attempts")

  val StateRetryMaxDelayMs: Entry[Long] = Entry(
    "spark.indextables.state.retry.maxDelayMs", 5000L,
    "Largest backoff delay between state write attempts")

  val CompressionEnabled: Entry[Boolean] = Entry(
    "spark.indextables.transaction.compression.enabled", true,
    "Write version files gzip-compressed (with the 01 01 header)")

  val CheckpointEnabled: Entry[Boolean] = Entry(
    "spark.indextables.checkpoint.enabled", true,
    "Write a checkpoint every checkpoint.interval versions")

  val CheckpointInterval: Entry[Int] = Entry(
    "spark.indextables.checkpoint.interval", 10,
    "Versions between checkpoints")

  val CheckpointActionsPerPart: Entry[Int] = Entry(
    "spark.indextables.checkpoint.actionsPerPart", 100000,
    "Actions per part of a JSON checkpoint; more actions make it multi-part")

  val StateFormat: Entry[String] = Entry(
    "spark.indextables.state.format", "avro",
    "Checkpoint format: avro (the Avro state, V4) or json")

  val StateCompression: Entry[String] = Entry(
    "spark.indextables.state.compression", "zstd",
    "Codec of the Avro state files: zstd, snappy or none")

  val StateCompressionLevel: Entry[Int] = Entry(
    "spark.indextables.state.compressionLevel", 3,
    "Compression level of the zstd codec (1-22)")

  val StateEntriesPerManifest: Entry[Int] = Entry(
    "spark.indextables.state.entriesPerManifest", 50000,
    "Most file entries per Avro manifest")

  val StateReadParallelism: Entry[Int] = Entry(
    "spark.indextables.state.read.parallelism", 8,
    "Manifests read concurrently when loading an Avro state")

  val CompactionTombstoneThreshold: Entry[Double] = Entry(
    "spark.indextables.state.compaction.tombstoneThreshold", 0.10,
    "Tombstones over entries above which a checkpoint rewrites the state")

  val CompactionMaxManifests: Entry[Int] = Entry(
    "spark.indextables.state.compaction.maxManifests", 20,
    "Manifests above which a checkpoint rewrites the state")

  val SchemaRenormalizeThreshold: Entry[Int] = Entry(
    "spark.indextables.state.schema.renormalizeThreshold", 5,
    "Distinct docMappingRefs above which a checkpoint re-hashes them canonically")

  val TxLogRetentionHours: Entry[Long] = Entry(
    "spark.indextables.purge.txLogRetentionHours", 720L,
    "Hours a version file that a checkpoint covers is kept")

  val StateRetentionVersions: Entry[Int] = Entry(
    "spark.indextables.state.retention.versions", 2,
    "Newest Avro states always kept")

  val StateRetentionHours: Entry[Long] = Entry(
    "spark.indextables.state.retention.hours", 168L,
    "Hours an older Avro state is kept")

  val MinManifestAgeHours: Entry[Long] = Entry(
    "spark.indextables.state.gc.minManifestAgeHours", 1L,
    "Unreferenced manifests younger than this are never deleted")

  /**
   * The value of `key`. DataFrame reader and writer options arrive with lower-cased keys, so a
   * key that is not found as written is matched ignoring case.
   */
  private def lookup(options: Map[String, String], key: String): Option[String] =
    options.get(key).orElse(options.collectFirst { case (k, v) if k.equalsIgnoreCase(key) => v })

  def int(options: Map[String, String], e: Entry[Int]): Int =
    lookup(options, e.key).map { v =>
      scala.util.Try(v.trim.toInt).toOption.filter(_ > 0).getOrElse(
        throw TransactionLogErrors.invalidOption(e.key, v, "a positive integer"))
    }.getOrElse(e.default)

  def long(options: Map[String, String], e: Entry[Long]): Long =
    lookup(options, e.key).map { v =>
      scala.util.Try(v.trim.toLong).toOption.filter(_ >= 0).getOrElse(
        throw TransactionLogErrors.invalidOption(e.key, v, "a non-negative integer"))
    }.getOrElse(e.default)

  def double(options: Map[String, String], e: Entry[Double]): Double =
    lookup(options, e.key).map { v =>
      scala.util.Try(v.trim.toDouble).toOption.filter(d => d >= 0 && !d.isNaN).getOrElse(
        throw TransactionLogErrors.invalidOption(e.key, v, "a non-negative number"))
    }.getOrElse(e.default)

  def string(options: Map[String, String], e: Entry[String], allowed: Set[String]): String =
    lookup(options, e.key).map { v =>
      val n = v.trim.toLowerCase(java.util.Locale.ROOT)
      if (allowed.contains(n)) n
      else throw TransactionLogErrors.invalidOption(e.key, v, allowed.toSeq.sorted.mkString(" or "))
    }.getOrElse(e.default)

  def boolean(options: Map[String, String], e: Entry[Boolean]): Boolean =
    lookup(options, e.key).map { v =>
      v.trim.toLowerCase(java.util.Locale.ROOT) match {
        case "true" => true
        case "false" => false
        case _ => throw TransactionLogErrors.invalidOption(e.key, v, "true or false")
      }
    }.getOrElse(e.default)
}

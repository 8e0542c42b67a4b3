package io.indextables.spark.config

import java.util.Locale

/** One configuration key: its name, its default and a one-line description. */
final case class ConfEntry[T](key: String, default: T, doc: String)(val parse: String => T)

/**
 * Every `spark.indextables.*` key the plugin reads, defined once with its default.
 *
 * Precedence, implemented once in [[IndexTablesOptions]]: a read/write option beats the session
 * configuration, which beats a property recorded in the table, which beats the default.
 */
object IndexTablesConf {
  private def long(key: String, default: Long, doc: String) =
    ConfEntry[Long](key, default, doc)(s => s.trim.toLong)
  private def int(key: String, default: Int, doc: String) =
    ConfEntry[Int](key, default, doc)(s => s.trim.toInt)
  private def bool(key: String, default: Boolean, doc: String) =
    ConfEntry[Boolean](key, default, doc)(s => s.trim.toLowerCase(Locale.ROOT).toBoolean)

  val MaxRowsPerSplit: ConfEntry[Long] = long(
    "spark.indextables.maxRowsPerSplit", 1000000L,
    "Rows after which a writer task finishes its split and starts a new one.")

  val WriterHeapSize: ConfEntry[Long] = long(
    "spark.indextables.indexWriter.heapSize", 50000000L,
    "Bytes of indexing heap for each native index writer (one per partition being written).")

  val ArrowBatchRows: ConfEntry[Int] = int(
    "spark.indextables.write.arrow.batchSize", 8192,
    "Rows per Arrow batch exported to the native writer, and per batch of documents.")

  val ReadBatchSize: ConfEntry[Int] = int(
    "spark.indextables.read.batchSize", 2048,
    "Documents fetched from a split per native retrieval call.")

  val CacheMaxSize: ConfEntry[Long] = long(
    "spark.indextables.cache.maxSize", 268435456L,
    "Bytes of the executor-wide split cache (footers and index pages).")

  val StatsTruncationMaxLength: ConfEntry[Int] = int(
    "spark.indextables.stats.truncation.maxLength", 32,
    "Characters kept of string min/max statistics; longer values are truncated.")

  val TransactionCompression: ConfEntry[Boolean] = bool(
    "spark.indextables.transaction.compression.enabled", true,
    "Write transaction log version files gzip-compressed.")

  /** `spark.indextables.indexing.typemap.<column>` = string | text | json. */
  val TypemapPrefix: String = "spark.indextables.indexing.typemap."

  val allEntries: Seq[ConfEntry[_]] = Seq(
    MaxRowsPerSplit, WriterHeapSize, ArrowBatchRows, ReadBatchSize, CacheMaxSize,
    StatsTruncationMaxLength, TransactionCompression)
}

package io.indextables.spark.config

import java.util.Locale

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.transaction.LogSettings

/**
 * The one resolver of `spark.indextables.*` settings for a read, a write or a command, as
 * Iceberg's `SparkReadConf`/`SparkWriteConf` are. Precedence, highest first:
 *  1. an option of this read or write (`.option(...)`, or a command's options);
 *  2. the session configuration (`spark.conf.set(...)`);
 *  3. a property recorded in the table's metadata;
 *  4. the entry's default in [[IndexTablesConf]].
 * Keys compare ignoring case in every layer: DataFrame options reach the plugin lower-cased, while
 * the session configuration keeps the case it was given. An invalid value fails, naming the key.
 * Immutable and serializable, so the driver can hand it to executors.
 *
 * @param options     options given to this read or write
 * @param sessionConf `spark.indextables.*` entries of the session configuration
 * @param tableProps  properties recorded in the table's metadata
 */
final case class IndexTablesOptions(
    options: Map[String, String],
    sessionConf: Map[String, String] = Map.empty,
    tableProps: Map[String, String] = Map.empty) {

  private def lower(m: Map[String, String]) = m.map { case (k, v) =>
    k.toLowerCase(Locale.ROOT) -> v
  }
  @transient private lazy val layers = Seq(lower(options), lower(sessionConf), lower(tableProps))

  /** The raw value of `key` from the highest layer that sets it. */
  def raw(key: String): Option[String] = {
    val k = key.toLowerCase(Locale.ROOT)
    layers.collectFirst { case m if m.contains(k) => m(k) }
  }

  def get[T](entry: ConfEntry[T]): T = raw(entry.key) match {
    case None => entry.default
    case Some(v) =>
      entry.parse(v).getOrElse(throw IndexTablesErrors.invalidOption(entry.key, v, entry.expected))
  }

  /** Every typemap entry: column name (lower-cased) to its lower-cased index type. */
  def typemap: Map[String, String] = {
    val prefix = IndexTablesConf.TypemapPrefix.toLowerCase(Locale.ROOT)
    // Lowest precedence first, so higher layers overwrite.
    Seq(tableProps, sessionConf, options).foldLeft(Map.empty[String, String]) { (acc, layer) =>
      acc ++ layer.collect {
        case (k, v) if k.toLowerCase(Locale.ROOT).startsWith(prefix) =>
          k.substring(prefix.length).toLowerCase(Locale.ROOT) -> v.trim.toLowerCase(Locale.ROOT)
      }
    }
  }

  /** The transaction log's settings, resolved like every other key. */
  def logSettings: LogSettings = {
    import IndexTablesConf._
    LogSettings(
      retryMaxAttempts = get(RetryMaxAttempts),
      retryBaseDelayMs = get(RetryBaseDelayMs),
      retryMaxDelayMs = get(RetryMaxDelayMs),
      compression = get(TransactionCompression),
      checkpointEnabled = get(CheckpointEnabled),
      checkpointInterval = get(CheckpointInterval),
      checkpointActionsPerPart = get(CheckpointActionsPerPart),
      stateFormat = get(StateFormat),
      stateCompression = get(StateCompression),
      stateCompressionLevel = get(StateCompressionLevel),
      stateEntriesPerManifest = get(StateEntriesPerManifest),
      stateReadParallelism = get(StateReadParallelism),
      stateRetryMaxAttempts = get(StateRetryMaxAttempts),
      stateRetryBaseDelayMs = get(StateRetryBaseDelayMs),
      stateRetryMaxDelayMs = get(StateRetryMaxDelayMs),
      compactionTombstoneThreshold = get(CompactionTombstoneThreshold),
      compactionMaxManifests = get(CompactionMaxManifests),
      schemaRenormalizeThreshold = get(SchemaRenormalizeThreshold),
      txLogRetentionHours = get(TxLogRetentionHours),
      stateRetentionVersions = get(StateRetentionVersions),
      stateRetentionHours = get(StateRetentionHours),
      minManifestAgeHours = get(MinManifestAgeHours)
    )
  }

  /**
   * The options that change how files are reached (Hadoop `fs.*` / `dfs.*` keys), as Delta keys
   * its log cache: two reads with equal file-system options share one log handle's state.
   */
  /**
   * The options handed to Hadoop's configuration: all but the plugin's internal ones
   * (`__indextables.*`, such as the per-query IndexQuery key), so that equal settings give equal
   * configurations from one query to the next.
   */
  def hadoopOptions: Map[String, String] =
    options.filterNot { case (k, _) =>
      k.toLowerCase(Locale.ROOT).startsWith(IndexTablesOptions.InternalPrefix)
    }

  def fileSystemOptions: Map[String, String] = options.filter { case (k, _) =>
    val l = k.toLowerCase(Locale.ROOT)
    l.startsWith("fs.") || l.startsWith("dfs.")
  }
}

object IndexTablesOptions {

  /** Options under this prefix are the plugin's own plumbing, never user settings. */
  val InternalPrefix: String = "__indextables."

  /**
   * A read option naming, one per line, the only splits the read may see: a replaceWhere
   * rewrites the rows of chosen splits through it.
   */
  val OnlySplitsOption: String = InternalPrefix + "read.onlySplits"

  /** Every setting at its default. */
  val Defaults: IndexTablesOptions = IndexTablesOptions(Map.empty)

  /** The typemap a table records in its metadata's configuration. */
  def recordedTypemap(configuration: Map[String, String]): Map[String, String] =
    IndexTablesOptions(Map.empty, tableProps = configuration).typemap
}

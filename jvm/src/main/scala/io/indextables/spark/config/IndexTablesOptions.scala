package io.indextables.spark.config

import java.util.Locale

import io.indextables.spark.IndexTablesErrors

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

  /** The value of `entry` (or of one of its aliases) from the highest layer that sets it. */
  def get[T](entry: ConfEntry[T]): T = {
    val keys = entry.key +: entry.aliases
    val found = layers.iterator.flatMap { m =>
      keys.find(k => m.contains(k.toLowerCase(Locale.ROOT)))
        .map(k => (k, m(k.toLowerCase(Locale.ROOT))))
    }.take(1).toList.headOption
    found match {
      case None => entry.default
      case Some((k, v)) =>
        entry.parse(v).getOrElse(throw IndexTablesErrors.invalidOption(k, v, entry.expected))
    }
  }

  /**
   * The value of `entry` when a layer sets it (to a valid value), else None: for settings whose
   * absence means something other than their default.
   */
  def getOption[T](entry: ConfEntry[T]): Option[T] = {
    val names = (entry.key +: entry.aliases).map(_.toLowerCase(Locale.ROOT))
    if (layers.exists(_.keys.exists(names.contains))) Some(get(entry)) else None
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
   * The options handed to Hadoop's configuration: all but the plugin's internal ones
   * (`__indextables.*`, such as the per-query IndexQuery key), so that equal settings give equal
   * configurations from one query to the next.
   */
  def hadoopOptions: Map[String, String] =
    // A plain map: Spark's CaseInsensitiveMap would hand Hadoop the keys lower-cased, and the
    // storage settings below must replace the session's raw values under their exact names.
    options.iterator.filterNot { case (k, _) =>
      k.toLowerCase(Locale.ROOT).startsWith(IndexTablesOptions.InternalPrefix)
    }.toMap ++ storageSettings

  /**
   * The object-store settings that are set, under their exact names and with sizes in bytes,
   * as the stores read them from the Hadoop configuration (on the driver and the executors).
   * From the options and the session only: a table's recorded properties never hold them.
   */
  def storageSettings: Map[String, String] = {
    val noTable = copy(tableProps = Map.empty)
    IndexTablesConf.storageEntries.flatMap(e => noTable.getOption(e).map(e.key -> _.toString))
      .toMap
  }

  /**
   * The options that change how files are reached (Hadoop `fs.*` / `dfs.*` keys, and the
   * object-store settings), as Delta keys
   * its log cache: two reads with equal file-system options share one log handle's state.
   */
  def fileSystemOptions: Map[String, String] = options.filter { case (k, _) =>
    val l = k.toLowerCase(Locale.ROOT)
    l.startsWith("fs.") || l.startsWith("dfs.")
  } ++ storageSettings
}

object IndexTablesOptions {

  /** Options under this prefix are the plugin's own plumbing, never user settings. */
  val InternalPrefix: String = "__indextables."

  /**
   * An internal read option: the scan of a companion table takes the index route whatever its
   * filters (commands such as PREWARM plan the scan a search would use).
   */
  val IndexRouteOption: String = InternalPrefix + "read.indexRoute"

  /**
   * A read option naming, one per line, the only splits the read may see: a replaceWhere
   * rewrites the rows of chosen splits through it.
   */
  val OnlySplitsOption: String = InternalPrefix + "read.onlySplits"

  /** Every setting at its default. */
  val Defaults: IndexTablesOptions = IndexTablesOptions(Map.empty)

  /** Every `spark.indextables.*` key a write may be given, as documented. */
  private lazy val knownNames: Seq[String] =
    IndexTablesConf.allEntries.flatMap(e => e.key +: e.aliases) ++
      IndexTablesConf.indexingListKeys

  private lazy val knownKeys: Set[String] = knownNames.map(_.toLowerCase(Locale.ROOT)).toSet

  private val knownPrefixes = IndexTablesConf.indexingPrefixes.map(_.toLowerCase(Locale.ROOT))

  /**
   * Fails on the first `spark.indextables.*` key of `writeOptions` that no setting reads, naming
   * the known keys closest to it, unless `write.strictOptions` is false: a misspelt option
   * would otherwise be ignored without a word.
   */
  def checkWriteOptions(writeOptions: Map[String, String], resolved: IndexTablesOptions): Unit =
    checkOptions(writeOptions, resolved, "write")

  /** [[checkWriteOptions]] for the options of an `operation` ("write", "streaming read"). */
  def checkOptions(
      options: Map[String, String],
      resolved: IndexTablesOptions,
      operation: String): Unit =
    if (resolved.get(IndexTablesConf.StrictOptions)) {
      options.keys.toSeq.sorted.foreach { key =>
        val k = key.toLowerCase(Locale.ROOT)
        val known =
          knownKeys.contains(k) || knownPrefixes.exists(p => k.startsWith(p) && k.length > p.length)
        if (k.startsWith("spark.indextables.") && !known) {
          val candidates = knownNames.toSeq ++
            IndexTablesConf.indexingPrefixes.map(_ + "<column>")
          val close = candidates.map(c => c -> distance(k, c.toLowerCase(Locale.ROOT))).filter(
            _._2 <= math.max(3, k.length / 4))
            .sortBy(p => (p._2, p._1)).take(3).map(_._1)
            .map(c => knownNames.find(_.equalsIgnoreCase(c)).getOrElse(c))
          throw IndexTablesErrors.unknownOption(operation, key, close)
        }
      }
    }

  /** Levenshtein distance. */
  private def distance(a: String, b: String): Int = {
    var prev = Array.tabulate(b.length + 1)(identity)
    a.indices.foreach { i =>
      val cur = new Array[Int](b.length + 1)
      cur(0) = i + 1
      b.indices.foreach { j =>
        val cost = if (a(i) == b(j)) 0 else 1
        cur(j + 1) = math.min(math.min(cur(j) + 1, prev(j + 1) + 1), prev(j) + cost)
      }
      prev = cur
    }
    prev(b.length)
  }
}

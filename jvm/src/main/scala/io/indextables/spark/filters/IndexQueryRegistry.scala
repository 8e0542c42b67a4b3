package io.indextables.spark.filters

/**
 * The hand-off of IndexQuery filter trees from the Catalyst rule to the scan (Spark's pushdown
 * API carries only its own filter types). The optimizer rule stores a relation's
 * [[MixedBooleanFilter]] here under a fresh random key and tags the relation with that key in the
 * option [[KeyOption]]; `Table.newScanBuilder` receives the relation's options, so the scan of
 * exactly that relation finds exactly that tree, in joins and self-joins too, whatever thread
 * plans it. The map is weak: its key is the very String the relation's options hold, so an entry
 * lives as long as the plan that holds the relation, and the GC drops it afterwards. The key is
 * no file-system option, so it never reaches the transaction log's cache key. Thread-safe.
 */
object IndexQueryRegistry {

  /** The relation option that carries the key. */
  val KeyOption: String = "__indextables.indexquery.key"

  private val trees = new java.util.WeakHashMap[String, MixedBooleanFilter]()

  /** A fresh key: a new String instance, so that only its holders keep the entry alive. */
  def newKey(): String = new String(java.util.UUID.randomUUID().toString)

  /** Stores `filter` under `key`, which must be the very String the relation's option holds. */
  def store(key: String, filter: MixedBooleanFilter): Unit =
    trees.synchronized(trees.put(key, filter))

  def lookup(key: String): Option[MixedBooleanFilter] =
    trees.synchronized(Option(trees.get(key)))

  /**
   * The relation option that marks a stream's read (set with the key by the rule, as it tags
   * a stream): its scan is the stream's, never answered on the driver.
   */
  val StreamOption: String = "__indextables.indexquery.stream"

  /** Whether a relation's options mark a stream's read ([[StreamOption]]). */
  def streamIn(options: Map[String, String]): Boolean =
    optionIn(options, StreamOption).contains("true")

  /** The key among a relation's options, if the rule tagged it. */
  def keyIn(options: Map[String, String]): Option[String] = optionIn(options, KeyOption)

  /** A relation's option `name`, whatever the case of its key (Spark's options ignore case). */
  private def optionIn(options: Map[String, String], name: String): Option[String] =
    options.collectFirst { case (k, v) if k.equalsIgnoreCase(name) => v }
}

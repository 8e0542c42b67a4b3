package io.indextables.spark.util

/**
 * A map of at most `maxEntries` entries that drops the least recently used one past that, for
 * the JVM-wide memos of immutable facts (decoded configurations, checked split footers, the
 * shared state of a table's log). Thread-safe: every call holds the map's lock, and a value is
 * computed outside it, so two callers may compute the same value; the first stored wins.
 */
final class BoundedCache[K, V <: AnyRef](maxEntries: Int) {
  private val entries = new java.util.LinkedHashMap[K, V](16, 0.75f, true) {
    override def removeEldestEntry(e: java.util.Map.Entry[K, V]): Boolean =
      this.size() > maxEntries
  }

  def get(key: K): Option[V] = entries.synchronized(Option(entries.get(key)))

  /** The value stored under `key`, else `compute()`'s, stored; the value stored first wins. */
  def getOrElseUpdate(key: K)(compute: => V): V = get(key).getOrElse {
    val value = compute
    entries.synchronized(Option(entries.putIfAbsent(key, value)).getOrElse(value))
  }

  def clear(): Unit = entries.synchronized(entries.clear())

  /** How many entries it holds now. */
  def size: Int = entries.synchronized(entries.size())

  /** Removes every entry whose key `matches`; how many. */
  def removeIf(matches: K => Boolean): Int = entries.synchronized {
    val it = entries.keySet().iterator()
    var n = 0
    while (it.hasNext) if (matches(it.next())) { it.remove(); n += 1 }
    n
  }
}

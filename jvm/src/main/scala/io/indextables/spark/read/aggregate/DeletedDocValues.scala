package io.indextables.spark.read.aggregate

import org.apache.spark.unsafe.types.UTF8String

import io.indextables.spark.schema.IndexedField
import io.indextables.spark.transaction.DeletionVectorDescriptor

/**
 * The stored values of the deleted docs of splits with deletion vectors, kept per JVM, one
 * column at a time, for [[IndexTables4SparkAggregateReader]]'s `lessDeleted` (tantivy's
 * partials of all a split's docs less its deleted docs'). Fetching a doc by number costs ~17 us,
 * and every aggregation over the split would fetch its deleted docs again; here, a later
 * aggregation of the same split fetches only the columns no earlier one read. Held by column,
 * not by doc, because a doc's fetch costs more the more columns it returns (measured: all eight
 * aggregatable columns of a table took about twice as long as two).
 *
 * An entry is keyed by the table, the split, its vector's whole descriptor (its storage, path,
 * offset, size and cardinality) and the column as the split holds it ([[IndexedField]]: name,
 * type and index kind). A DELETE writes a new vector, under a new name, so an entry never
 * serves another vector's docs; an old vector's entries are no longer asked for and age out. At
 * most `maxBytes` (estimated) are kept in a JVM, least recently used dropped first; a column
 * larger than that is not kept. Thread-safe.
 */
object DeletedDocValues {

  /** Which split, vector and column an entry holds the deleted docs' values of. */
  final case class Key(
      table: String,
      split: String,
      vector: DeletionVectorDescriptor,
      field: IndexedField)

  /**
   * One column of a split's deleted docs: a value per deleted doc in ascending doc order (NULL
   * where a doc has none). Strings must not share a buffer with anything else (they would keep
   * it alive).
   */
  final class Values(val values: Array[Any]) {

    /** Roughly the heap it takes: a reference per value, and a boxed number or a string. */
    val bytes: Long = 16L + values.iterator.map {
      case null => 8L
      case s: UTF8String => 56L + s.numBytes()
      case _ => 24L
    }.sum
  }

  // Least recently used first; `held` is the sum of their estimated bytes.
  private val entries = new java.util.LinkedHashMap[Key, Values](16, 0.75f, true)
  private var held = 0L

  /** The values kept under `key`, if any. */
  def get(key: Key): Option[Values] = entries.synchronized(Option(entries.get(key)))

  /**
   * Keeps `values` under `key` (replacing what it held), then drops the least recently used
   * entries until at most `maxBytes` are kept; values larger than that are not kept.
   */
  def put(key: Key, values: Values, maxBytes: Long): Unit = entries.synchronized {
    Option(entries.remove(key)).foreach(v => held -= v.bytes)
    if (values.bytes <= maxBytes) {
      entries.put(key, values)
      held += values.bytes
      val it = entries.values().iterator()
      while (held > maxBytes && it.hasNext) {
        held -= it.next().bytes
        it.remove()
      }
    }
  }

  /** How many columns, and their estimated bytes, are kept. */
  def usage: (Int, Long) = entries.synchronized((entries.size(), held))

  /** Drops every entry. */
  def clear(): Unit = entries.synchronized { entries.clear(); held = 0L }
}

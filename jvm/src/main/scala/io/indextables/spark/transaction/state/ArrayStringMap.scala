package io.indextables.spark.transaction.state

import scala.collection.immutable

/**
 * An immutable string map over two arrays, for the small maps (statistics, partition values)
 * that every entry of a large state carries: building and holding one costs a fraction of a hash
 * trie. Lookups scan the keys, so it is for maps of a few dozen keys at most. Adding or removing
 * a key returns an ordinary Map. Equal to any Map with the same entries.
 */
private[state] final class ArrayStringMap(keys: Array[String], values: Array[String])
    extends immutable.AbstractMap[String, String] with Serializable {

  require(keys.length == values.length)

  override def size: Int = keys.length

  override def get(key: String): Option[String] = {
    var i = 0
    while (i < keys.length) {
      if (keys(i) == key) return Some(values(i))
      i += 1
    }
    None
  }

  override def iterator: Iterator[(String, String)] = keys.indices.iterator.map(i => keys(i) -> values(i))

  override def updated[V1 >: String](key: String, value: V1): immutable.Map[String, V1] =
    immutable.HashMap(iterator.toSeq: _*).updated(key, value)

  override def +[V1 >: String](kv: (String, V1)): immutable.Map[String, V1] = updated(kv._1, kv._2)

  override def -(key: String): immutable.Map[String, String] = immutable.HashMap(iterator.toSeq: _*) - key
}

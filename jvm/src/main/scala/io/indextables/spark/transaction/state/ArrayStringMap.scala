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

/**
 * A string map kept as the bytes of its entries (each key and value as a 4-byte length, -1 for a
 * null value, and UTF-8 bytes) until first read. A state of a million entries carries two
 * statistics maps in each, and most reads look at few of them: a read pruned to one partition
 * never does. Decoding is thread-safe and happens once; a repeated key keeps its last value.
 */
private[state] final class PackedStringMap(packed: Array[Byte])
    extends immutable.AbstractMap[String, String] with Serializable {

  @transient private lazy val decoded: immutable.Map[String, String] = {
    val keys = new java.util.ArrayList[String](8)
    val values = new java.util.ArrayList[String](8)
    var at = 0
    def next(): String = {
      val len = ((packed(at) & 0xff) << 24) | ((packed(at + 1) & 0xff) << 16) |
        ((packed(at + 2) & 0xff) << 8) | (packed(at + 3) & 0xff)
      at += 4
      if (len < 0) null
      else {
        val s = new String(packed, at, len, java.nio.charset.StandardCharsets.UTF_8)
        at += len
        s
      }
    }
    while (at < packed.length) {
      keys.add(next().intern()) // column names: a few, shared by every entry
      values.add(next())
    }
    PackedStringMap.build(keys, values)
  }

  override def size: Int = decoded.size
  override def get(key: String): Option[String] = decoded.get(key)
  override def iterator: Iterator[(String, String)] = decoded.iterator
  override def updated[V1 >: String](key: String, value: V1): immutable.Map[String, V1] =
    decoded.updated(key, value)
  override def +[V1 >: String](kv: (String, V1)): immutable.Map[String, V1] = decoded + kv
  override def -(key: String): immutable.Map[String, String] = decoded - key

  // Serialized as its decoded form: a plain map, independent of this class.
  private def writeReplace(): AnyRef = decoded
}

private[state] object PackedStringMap {

  /** A map of parallel keys and values: arrays for more than four distinct keys. */
  def build(keys: java.util.List[String], values: java.util.List[String]): immutable.Map[String, String] =
    if (keys.size() > 4 && keys.size() <= 32 && distinct(keys)) {
      new ArrayStringMap(keys.toArray(new Array[String](0)), values.toArray(new Array[String](0)))
    } else {
      // Small maps are Scala's Map1 to Map4; repeated keys (not written by us) keep the last
      // value, as a hash map would.
      var m = immutable.Map.empty[String, String]
      var i = 0
      while (i < keys.size()) { m = m.updated(keys.get(i), values.get(i)); i += 1 }
      m
    }

  private def distinct(keys: java.util.List[String]): Boolean = {
    var i = 0
    while (i < keys.size()) {
      var j = i + 1
      while (j < keys.size()) { if (keys.get(i) == keys.get(j)) return false; j += 1 }
      i += 1
    }
    true
  }
}

package io.indextables.spark.transaction.state

import scala.collection.immutable

import io.indextables.spark.IndexTablesErrors

/**
 * An immutable string map over two arrays, for the small maps (statistics, partition values)
 * that every entry of a large state carries: building and holding one costs a fraction of a hash
 * trie. Lookups scan the keys, so it is for maps of a few dozen keys at most. Adding or removing
 * a key returns an ordinary Map. Equal to any Map with the same entries.
 */
private[state] final class ArrayStringMap(keys: Array[String], values: Array[String])
    extends StringMapBase with Serializable {

  if (keys.length != values.length)
    throw IndexTablesErrors.internalError(
      s"a state map of ${keys.length} keys and ${values.length} values")

  override def size: Int = keys.length

  override def get(key: String): Option[String] = {
    var i = 0
    while (i < keys.length) {
      if (keys(i) == key) return Some(values(i))
      i += 1
    }
    None
  }

  override def iterator: Iterator[(String, String)] =
    keys.indices.iterator.map(i => keys(i) -> values(i))

  override def updated[V1 >: String](key: String, value: V1): immutable.Map[String, V1] =
    immutable.HashMap(iterator.toSeq: _*).updated(key, value)

  override protected def without(key: String): immutable.Map[String, String] =
    immutable.HashMap(iterator.toSeq: _*) - key
}

/**
 * A string map kept as the bytes of its keys and values, alternately (see [[PackedStrings]]),
 * until first read. A state of a million entries carries two
 * statistics maps in each, and most reads look at few of them: a read pruned to one partition
 * never does. Decoding is thread-safe and happens once; a repeated key keeps its last value.
 */
private[state] final class PackedStringMap(packed: Array[Byte])
    extends StringMapBase with Serializable {

  @transient private lazy val decoded: immutable.Map[String, String] = {
    val keys = new java.util.ArrayList[String](8)
    val values = new java.util.ArrayList[String](8)
    var isKey = true
    PackedStrings.foreach(packed, packed.length) { s =>
      if (isKey) keys.add(s.intern()) // column names: a few, shared by every entry
      else values.add(s)
      isKey = !isKey
    }
    PackedStringMap.build(keys, values)
  }

  override def size: Int = decoded.size
  override def get(key: String): Option[String] = decoded.get(key)
  override def iterator: Iterator[(String, String)] = decoded.iterator
  override def updated[V1 >: String](key: String, value: V1): immutable.Map[String, V1] =
    decoded.updated(key, value)
  override protected def without(key: String): immutable.Map[String, String] = decoded - key

  // Serialized as its decoded form: a plain map, independent of this class.
  private def writeReplace(): AnyRef = decoded
}

private[state] object PackedStringMap {

  /** A map of parallel keys and values: arrays for more than four distinct keys. */
  def build(
      keys: java.util.List[String],
      values: java.util.List[String]): immutable.Map[String, String] =
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

/**
 * A growable run of strings, each as its 4-byte big-endian UTF-8 length and its bytes: how the
 * state reader holds map entries it may never need as strings. Not thread-safe.
 */
private[state] final class PackedStrings(initialBytes: Int) {
  private var bytes = new Array[Byte](initialBytes)
  private var used = 0

  def length: Int = used
  def clear(): Unit = used = 0

  def append(u: org.apache.avro.util.Utf8): Unit = {
    val len = u.getByteLength
    if (used + len + 4 > bytes.length) {
      bytes = java.util.Arrays.copyOf(bytes, math.max(bytes.length * 2, used + len + 4))
    }
    bytes(used) = (len >>> 24).toByte
    bytes(used + 1) = (len >>> 16).toByte
    bytes(used + 2) = (len >>> 8).toByte
    bytes(used + 3) = len.toByte
    System.arraycopy(u.getBytes, 0, bytes, used + 4, len)
    used += len + 4
  }

  def sameAs(other: PackedStrings): Boolean =
    used == other.used && java.util.Arrays.equals(bytes, 0, used, other.bytes, 0, other.used)

  def toArray: Array[Byte] = java.util.Arrays.copyOf(bytes, used)

  def foreach(f: String => Unit): Unit = PackedStrings.foreach(bytes, used)(f)
}

private[state] object PackedStrings {

  /** Each string of the packed `bytes` up to `length`, in order. */
  def foreach(bytes: Array[Byte], length: Int)(f: String => Unit): Unit = {
    var at = 0
    while (at < length) {
      val len = ((bytes(at) & 0xff) << 24) | ((bytes(at + 1) & 0xff) << 16) |
        ((bytes(at + 2) & 0xff) << 8) | (bytes(at + 3) & 0xff)
      f(new String(bytes, at + 4, len, java.nio.charset.StandardCharsets.UTF_8))
      at += 4 + len
    }
  }
}

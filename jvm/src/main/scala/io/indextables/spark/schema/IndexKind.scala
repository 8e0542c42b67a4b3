package io.indextables.spark.schema

/** How one column is held in a split: the tantivy field type and, for strings, how it is cut. */
sealed abstract class IndexKind(val name: String) extends Serializable

object IndexKind {

  /** A raw-tokenized string: exact-match terms, ranges, prefixes. */
  case object RawString extends IndexKind("string")

  /** A tokenized string (its tokenizer is the field's), positions kept for phrases. */
  case object Text extends IndexKind("text")

  /** A JSON object: a string column holding JSON, a struct, a map, or an array. */
  case object Json extends IndexKind("json")

  /** An IPv4 or IPv6 address held in a string column. */
  case object Ip extends IndexKind("ip")
  case object I64 extends IndexKind("i64")
  case object F64 extends IndexKind("f64")
  case object Bool extends IndexKind("bool")
  case object DateTime extends IndexKind("datetime")
  case object Bytes extends IndexKind("bytes")
}

/**
 * One data (non-partition) column as a split holds it: its index kind, its tokenizer (text
 * only), and whether it is indexed (searchable), stored (readable) and fast (columnar: ranges,
 * existence, aggregations).
 */
final case class IndexedField(
    name: String,
    dataType: org.apache.spark.sql.types.DataType,
    kind: IndexKind,
    tokenizer: Option[String] = None,
    indexed: Boolean = true,
    stored: Boolean = true,
    fast: Boolean = true) {

  /** Whether `=` and substring filters can be answered from its tokens (tantivy's `default`). */
  def defaultTokenized: Boolean = kind == IndexKind.Text && tokenizer.forall(_ == "default")
}

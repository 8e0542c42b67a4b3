package io.indextables.spark.schema

/** How one column is held in a split: the tantivy field type and, for strings, the tokenizer. */
sealed abstract class IndexKind(val name: String) extends Serializable

object IndexKind {

  /** A raw-tokenized string: exact-match terms, ranges, prefixes. */
  case object RawString extends IndexKind("string")

  /** A string tokenized with tantivy's `default` tokenizer, positions kept for phrases. */
  case object Text extends IndexKind("text")

  /** A JSON object: a string column holding JSON, a struct, or an array. */
  case object Json extends IndexKind("json")
  case object I64 extends IndexKind("i64")
  case object F64 extends IndexKind("f64")
  case object Bool extends IndexKind("bool")
  case object DateTime extends IndexKind("datetime")
  case object Bytes extends IndexKind("bytes")
}

/** One data (non-partition) column with its index kind. */
final case class IndexedField(
    name: String,
    dataType: org.apache.spark.sql.types.DataType,
    kind: IndexKind)

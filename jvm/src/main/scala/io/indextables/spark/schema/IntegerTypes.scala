package io.indextables.spark.schema

import org.apache.spark.sql.catalyst.expressions.SpecializedGetters
import org.apache.spark.sql.types.{ByteType, DataType, IntegerType, LongType, ShortType}

/**
 * Spark's integer types (tinyint, smallint, int, bigint): a split holds every one of them as a
 * tantivy i64, and a read gives each back as its own type. The one place that widens such a value
 * to a long and narrows a long back, refusing (None) a long outside the type rather than wrapping
 * it. Stateless.
 */
object IntegerTypes {

  def contains(dt: DataType): Boolean = dt match {
    case ByteType | ShortType | IntegerType | LongType => true
    case _ => false
  }

  /** The largest magnitude a value of `dt` takes, for the types narrower than a long. */
  def maxMagnitude(dt: DataType): Option[BigInt] = dt match {
    case ByteType => Some(BigInt(128))
    case ShortType => Some(BigInt(32768))
    case IntegerType => Some(BigInt(Int.MinValue).abs)
    case _ => None
  }

  /** The value of the integer column of type `dt` at `ordinal` (not null), as a long. */
  def getLong(row: SpecializedGetters, ordinal: Int, dt: DataType): Long = dt match {
    case ByteType => row.getByte(ordinal).toLong
    case ShortType => row.getShort(ordinal).toLong
    case IntegerType => row.getInt(ordinal).toLong
    case _ => row.getLong(ordinal)
  }

  /** `v` as Spark's internal value of the integer type `dt`; None if `dt` cannot hold it. */
  def narrow(dt: DataType, v: Long): Option[Any] = dt match {
    case ByteType if v.isValidByte => Some(v.toByte)
    case ShortType if v.isValidShort => Some(v.toShort)
    case IntegerType if v.isValidInt => Some(v.toInt)
    case LongType => Some(v)
    case _ => None
  }
}

package io.indextables.spark.sync

import java.math.{BigDecimal => JBigDecimal}

import scala.util.Try

import org.apache.spark.sql.catalyst.expressions.{Cast, Literal}
import org.apache.spark.sql.types._

import io.indextables.spark.schema.PartitionValues

/**
 * The types of Hive partition directory values, inferred as Spark's file sources infer them
 * (`spark.sql.sources.partitionColumnTypeInference.enabled`): int, then long, then a decimal
 * without fraction, then double, then timestamp, then date, else string; the values of one
 * column widen to one type as Spark widens them (a long and a double make a string). So the
 * index types its partition columns as `spark.read.parquet` of the same directory does (Spark's
 * own rules are private to its analyzer; these are the cases directory values can produce).
 * Stateless.
 */
object PartitionInference {

  private val TimestampPattern = """\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d{1,9})?""".r
  private val DatePattern = """\d{4}-\d{2}-\d{2}""".r

  /** The type of one column's values (null for a NULL directory), NullType if all are NULL. */
  def columnType(values: Iterable[String], typeInference: Boolean, timeZone: String): DataType =
    values.filter(_ != null).foldLeft(NullType: DataType) { (t, v) =>
      wider(t, if (typeInference) typeOf(v, timeZone) else StringType)
    } match {
      case NullType => StringType
      case t => t
    }

  /** The type Spark gives one (unescaped, non-NULL) directory value. */
  def typeOf(raw: String, timeZone: String): DataType = {
    def castable(dt: DataType) =
      Cast(Literal.create(raw, StringType), dt, Some(timeZone)).eval() != null
    Try(Integer.parseInt(raw)).map(_ => IntegerType: DataType)
      .orElse(Try(java.lang.Long.parseLong(raw)).map(_ => LongType: DataType))
      .orElse(Try {
        val d = new JBigDecimal(raw)
        if (d.scale > 0 || d.precision > DecimalType.MAX_PRECISION)
          throw new NumberFormatException(raw)
        DecimalType(d.precision, 0): DataType
      })
      .orElse(Try(java.lang.Double.parseDouble(raw)).map(_ => DoubleType: DataType))
      .toOption
      .orElse(
        Some(TimestampType).filter(_ => TimestampPattern.pattern.matcher(raw).matches())
          .filter(castable))
      .orElse(Some(DateType).filter(_ => DatePattern.pattern.matcher(raw).matches())
        .filter(castable))
      .getOrElse(StringType)
  }

  /** The type two values of one column share, as Spark's partition discovery resolves it. */
  def wider(a: DataType, b: DataType): DataType = (a, b) match {
    case (x, y) if x == y => x
    case (NullType, y) => y
    case (x, NullType) => x
    case (DoubleType, _: DecimalType) | (_: DecimalType, DoubleType) => StringType
    case (DoubleType, LongType) | (LongType, DoubleType) => StringType
    case (IntegerType, LongType) | (LongType, IntegerType) => LongType
    case (IntegerType, DoubleType) | (DoubleType, IntegerType) => DoubleType
    case (x: DecimalType, y) if integral(y) => DecimalType(math.max(x.precision, digits(y)), 0)
    case (x, y: DecimalType) if integral(x) => DecimalType(math.max(y.precision, digits(x)), 0)
    case (DateType, TimestampType) | (TimestampType, DateType) => TimestampType
    case _ => StringType
  }

  private def integral(t: DataType): Boolean = t match {
    case IntegerType | LongType | _: DecimalType => true
    case _ => false
  }

  /** The digits a whole number of `t` may take (a decimal's precision). */
  private def digits(t: DataType): Int = t match {
    case IntegerType => 10
    case LongType => 20
    case d: DecimalType => d.precision
    case _ => DecimalType.MAX_PRECISION
  }

  /**
   * `raw` as the log records a value of `dataType`: the typed value cast back to string (`01`
   * becomes `1`), so pruning compares it with a filter literal exactly. None when `raw` is not
   * a value of `dataType`.
   */
  def canonical(raw: String, dataType: DataType, timeZone: String): Option[String] =
    if (raw == null) Some(null)
    else if (dataType == StringType) Some(raw)
    else
      Option(PartitionValues.decode(raw, dataType, timeZone)).map { v =>
        Cast(Literal(v, dataType), StringType, Some(timeZone)).eval().toString
      }
}

package io.indextables.spark.schema

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.catalog.ExternalCatalogUtils
import org.apache.spark.sql.catalyst.expressions.{BoundReference, Cast, Expression, Literal, UnsafeProjection}
import org.apache.spark.sql.types._

/**
 * Hive-style partition values and directories: the one place they are encoded and decoded. A
 * value is the column cast to string in the session time zone (as Spark's file sources write
 * them, see [[PartitionValueProjection]]); a null value is written as `__HIVE_DEFAULT_PARTITION__`
 * in paths and as JSON null in the log. Stateless and thread-safe.
 */
object PartitionValues {
  val DefaultPartitionName: String = ExternalCatalogUtils.DEFAULT_PARTITION_NAME

  /** `col=value/col2=value2` with each part escaped as Hive does. */
  def directory(partitionColumns: Seq[String], values: Map[String, String]): String =
    partitionColumns.map { c =>
      val v = values.get(c).flatMap(Option(_)).getOrElse(DefaultPartitionName)
      ExternalCatalogUtils.escapePathName(c) + "=" + ExternalCatalogUtils.escapePathName(v)
    }.mkString("/")

  /** Maps the native writer's placeholder for null back to a null value. */
  def fromNative(values: Map[String, String]): Map[String, String] =
    values.map { case (k, v) => k -> (if (v == DefaultPartitionName) null else v) }

  /** A recorded partition value (null for NULL) as Spark's internal value of `dataType`. */
  def decode(raw: String, dataType: DataType, timeZone: String): Any =
    if (raw == null) null
    else Cast(Literal.create(raw, StringType), dataType, Some(timeZone)).eval()

  /**
   * The recorded form a filter literal `v` takes in a column of `dataType`, where it has exactly
   * one (strings, dates, integers and booleans are written canonically); None otherwise.
   */
  def encodeLiteral(dataType: DataType, v: Any): Option[String] = (dataType, v) match {
    case (StringType, s: String) => Some(s)
    case (DateType, d: java.sql.Date) => Some(d.toLocalDate.toString).filter(isIsoDate)
    case (DateType, d: java.time.LocalDate) => Some(d.toString).filter(isIsoDate)
    case (
          ByteType | ShortType | IntegerType | LongType,
          i @ (_: Byte | _: Short | _: Int | _: Long)) =>
      Some(i.toString)
    case (BooleanType, b: Boolean) => Some(b.toString)
    case _ => None
  }

  private def isIsoDate(s: String): Boolean = s.length == 10 && s.charAt(4) == '-'
}

/**
 * Casts a row's partition columns to their string values. Not thread-safe (one per task).
 *
 * @param schema   the full write schema
 * @param columns  partition column names, in partition order
 * @param timeZone session time zone id, for timestamp partition values
 */
final class PartitionValueProjection(schema: StructType, columns: Seq[String], timeZone: String) {
  private val exprs: Seq[Expression] = columns.map { c =>
    val i = schema.fieldIndex(c)
    Cast(BoundReference(i, schema(i).dataType, nullable = true), StringType, Some(timeZone))
  }
  private val projection = UnsafeProjection.create(exprs)

  def isEmpty: Boolean = columns.isEmpty

  /** The string values of the row's partition columns (null for a null value). */
  def apply(row: InternalRow): Array[String] = {
    val p = projection(row)
    Array.tabulate(columns.length)(i => if (p.isNullAt(i)) null else p.getUTF8String(i).toString)
  }

  def asMap(values: Array[String]): Map[String, String] = columns.zip(values).toMap
}

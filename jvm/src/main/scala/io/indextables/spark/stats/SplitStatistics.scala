package io.indextables.spark.stats

import java.time.{Instant, LocalDate}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/**
 * Min/max statistics of one split, collected row by row on the executor. Not thread-safe.
 * Values are recorded as the log stores them: numbers in decimal notation, dates as
 * `yyyy-MM-dd`, timestamps as ISO-8601 instants in UTC, and strings truncated to
 * `truncateAt` characters (see [[StatsValues]] for how readers compare them).
 *
 * @param columns (ordinal in the row, field) of every data column to track
 */
final class SplitStatistics(columns: Seq[(Int, StructField)], truncateAt: Int) {
  private val mins = new Array[Any](columns.length)
  private val maxs = new Array[Any](columns.length)
  // NaN values of a floating column, timestamps with a fraction of a second (SplitCounts).
  private val oddities = new Array[Long](columns.length)
  // NaN values of a floating column with the sign bit set (SplitCounts.SignedNanCount).
  private val signedNans = new Array[Long](columns.length)

  def update(row: InternalRow): Unit = {
    var i = 0
    while (i < columns.length) {
      val (ord, f) = columns(i)
      if (!row.isNullAt(ord)) {
        val v: Any = f.dataType match {
          case StringType => row.getUTF8String(ord)
          case IntegerType | DateType => row.getInt(ord)
          // tinyint and smallint are compared, and recorded, as the ints they widen to.
          case ByteType => row.getByte(ord).toInt
          case ShortType => row.getShort(ord).toInt
          case LongType => row.getLong(ord)
          case TimestampType =>
            val t = row.getLong(ord)
            if (t % 1000000L != 0) oddities(i) += 1
            t
          case DoubleType =>
            val d = row.getDouble(ord)
            if (d.isNaN) {
              oddities(i) += 1
              if (java.lang.Double.doubleToRawLongBits(d) < 0) signedNans(i) += 1
              null
            } else d
          case FloatType =>
            val d = row.getFloat(ord)
            if (d.isNaN) {
              oddities(i) += 1
              if (java.lang.Float.floatToRawIntBits(d) < 0) signedNans(i) += 1
              null
            } else d
          case d: DecimalType => row.getDecimal(ord, d.precision, d.scale)
          case _ => null
        }
        if (v != null) {
          if (mins(i) == null || compare(v, mins(i)) < 0) mins(i) = copy(v)
          if (maxs(i) == null || compare(v, maxs(i)) > 0) maxs(i) = copy(v)
        }
      }
      i += 1
    }
  }

  private def copy(v: Any): Any = v match {
    case s: UTF8String => s.clone()
    case other => other
  }

  private def compare(a: Any, b: Any): Int = (a, b) match {
    case (x: UTF8String, y: UTF8String) => x.compareTo(y)
    case (x: Int, y: Int) => Integer.compare(x, y)
    case (x: Long, y: Long) => java.lang.Long.compare(x, y)
    case (x: Double, y: Double) => java.lang.Double.compare(x, y)
    case (x: Float, y: Float) => java.lang.Float.compare(x, y)
    case (x: Decimal, y: Decimal) => x.compare(y)
    case _ => 0
  }

  def minValues: Map[String, String] = render(mins, isMax = false)
  def maxValues: Map[String, String] = render(maxs, isMax = true)

  /**
   * The add action's `stats`: the NaN counts of every floating column (all, and those with the
   * sign bit set, as the rows held them) and the count of timestamps with a fraction of a
   * second of every timestamp column ([[SplitCounts]]).
   */
  def statsJson: Option[String] = {
    def counted(types: DataType*)(counts: Array[Long]) = columns.indices.collect {
      case i if types.contains(columns(i)._2.dataType) => columns(i)._2.name -> counts(i)
    }.toMap
    SplitCounts.json(Map(
      SplitCounts.NanCount -> counted(DoubleType, FloatType)(oddities),
      SplitCounts.SignedNanCount -> counted(DoubleType, FloatType)(signedNans),
      SplitCounts.SubSecondCount -> counted(TimestampType)(oddities)
    ))
  }

  private def render(values: Array[Any], isMax: Boolean): Map[String, String] =
    columns.indices.flatMap { i =>
      Option(values(i)).map(v => columns(i)._2.name -> format(columns(i)._2.dataType, v))
    }.toMap

  private def plain(s: String): String =
    if (s.contains('E')) new java.math.BigDecimal(s).toPlainString else s

  private def format(dt: DataType, v: Any): String = (dt, v) match {
    case (StringType, s: UTF8String) =>
      val str = s.toString
      if (str.length > truncateAt) str.substring(0, truncateAt) else str
    case (DateType, d: Int) => LocalDate.ofEpochDay(d.toLong).toString
    case (TimestampType, t: Long) => StatsValues.formatTimestamp(t)
    // Plain decimal notation (never 1.0E10), which every reader parses the same way.
    case (DoubleType, d: Double) => plain(d.toString)
    case (FloatType, f: Float) => plain(f.toString)
    case (_, d: Decimal) => d.toJavaBigDecimal.toPlainString
    case (_, other) => other.toString
  }
}

object SplitStatistics {

  /** Statistics over every data column whose type has an order. */
  def forSchema(dataColumns: Seq[(Int, StructField)], truncateAt: Int): SplitStatistics =
    new SplitStatistics(
      dataColumns.filter { case (_, f) => StatsValues.hasStats(f.dataType) },
      truncateAt)
}

/** Parsing and formatting of statistics values, shared by writers and data skipping. */
object StatsValues {
  def hasStats(dt: DataType): Boolean = dt match {
    case StringType | ByteType | ShortType | IntegerType | LongType | DoubleType | FloatType |
        DateType | TimestampType =>
      true
    case _: DecimalType => true
    case _ => false
  }

  def formatTimestamp(micros: Long): String = {
    val secs = Math.floorDiv(micros, 1000000L)
    val nanos = Math.floorMod(micros, 1000000L) * 1000L
    Instant.ofEpochSecond(secs, nanos).toString
  }

  def parseTimestamp(s: String): Long = {
    val i = Instant.parse(s)
    Math.addExact(Math.multiplyExact(i.getEpochSecond, 1000000L), (i.getNano / 1000).toLong)
  }
}

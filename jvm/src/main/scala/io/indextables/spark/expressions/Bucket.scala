package io.indextables.spark.expressions

import java.net.{URLDecoder, URLEncoder}
import java.nio.charset.StandardCharsets.UTF_8

import scala.util.Try

import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.indextables.spark.IndexTablesErrors

/**
 * A bucket function of GROUP BY: the value that names the bucket a column value falls into.
 * Spark evaluates it row by row ([[BucketFunction]]); a pushed aggregation asks tantivy's
 * histogram, date_histogram or range aggregation for the same buckets, whose keys equal what
 * [[keyOf]] returns for every value they hold (the pushdown takes a column only where they do).
 * Immutable.
 */
sealed trait Bucket extends Serializable {

  /** The SQL function's name. */
  def function: String

  /** The type of the bucket keys. */
  def resultType: DataType

  /** The bucket of `v` (a non-null internal value of a type [[Bucket.accepts]] allows). */
  def keyOf(v: Any): Any

  /** The bucket's arguments after the column, as SQL would write them (for EXPLAIN). */
  def arguments: Seq[String]

  /**
   * A name that determines the bucket exactly: V2 pushdown carries a function's canonical name,
   * and [[Bucket.fromCanonicalName]] reads it back.
   */
  final def canonicalName: String =
    (Seq(Bucket.Prefix, function) ++ arguments).map(URLEncoder.encode(_, UTF_8.name)).mkString(":")

  def describe(column: String): String = s"$function(${(column +: arguments).mkString(", ")})"
}

/** `floor((v - offset) / interval) * interval + offset`, in doubles, as tantivy computes it. */
final case class HistogramBucket(interval: Double, offset: Double) extends Bucket {
  override def function: String = Bucket.Histogram
  override def resultType: DataType = DoubleType
  override def keyOf(v: Any): Any = key(Bucket.asDouble(v))
  def key(d: Double): Double = math.floor((d - offset) / interval) * interval + offset
  override def arguments: Seq[String] = Seq(interval.toString, offset.toString)
}

/**
 * The start of the fixed-length interval (UTC, from the epoch, shifted by `offsetMicros`) a
 * timestamp falls into, as a timestamp.
 */
final case class DateHistogramBucket(intervalMicros: Long, offsetMicros: Long) extends Bucket {
  override def function: String = Bucket.DateHistogram
  override def resultType: DataType = TimestampType
  override def keyOf(v: Any): Any = key(v.asInstanceOf[Long])
  def key(micros: Long): Long =
    Math.floorDiv(micros - offsetMicros, intervalMicros) * intervalMicros + offsetMicros
  override def arguments: Seq[String] =
    Seq(intervalMicros, offsetMicros).map(m => s"'${Bucket.formatDuration(m)}'")
}

/** One named range of [[RangeBucket]]: from inclusive, to exclusive; None is unbounded. */
final case class NamedRange(name: String, from: Option[Double], to: Option[Double]) {
  def contains(d: Double): Boolean = from.forall(d >= _) && to.forall(d < _)
}

/** The name of the range a value falls into; NULL when it falls into none. */
final case class RangeBucket(ranges: Seq[NamedRange]) extends Bucket {
  override def function: String = Bucket.Range
  override def resultType: DataType = StringType
  override def keyOf(v: Any): Any = {
    val d = Bucket.asDouble(v)
    ranges.find(_.contains(d)).map(r => UTF8String.fromString(r.name)).orNull
  }
  override def arguments: Seq[String] = ranges.flatMap { r =>
    Seq(s"'${r.name}'", r.from.fold("NULL")(_.toString), r.to.fold("NULL")(_.toString))
  }
}

object Bucket {
  val Histogram = "indextables_histogram"
  val DateHistogram = "indextables_date_histogram"
  val Range = "indextables_range"
  private val Prefix = "indextables.bucket"

  /** The bucket a V2 function's canonical name describes, if it is one of ours. */
  def fromCanonicalName(name: String): Option[Bucket] =
    Try(name.split(":", -1).map(URLDecoder.decode(_, UTF_8.name)).toSeq).toOption.flatMap {
      case Seq(Prefix, Histogram, interval, offset) =>
        Try(HistogramBucket(interval.toDouble, offset.toDouble)).toOption
      case Seq(Prefix, DateHistogram, interval, offset) =>
        for {
          i <- Bucket.parseDuration(unquote(interval), signed = false)
          o <- Bucket.parseDuration(unquote(offset), signed = true)
        } yield DateHistogramBucket(i, o)
      case Prefix +: Range +: rest if rest.size % 3 == 0 =>
        def bound(s: String) = if (s == "NULL") None else Some(s.toDouble)
        Try(RangeBucket(rest.grouped(3).map { case Seq(n, f, t) =>
          NamedRange(unquote(n), bound(f), bound(t))
        }.toSeq)).toOption
      case _ => None
    }

  private def unquote(s: String): String = s.stripPrefix("'").stripSuffix("'")

  /** The column types a bucket function of `function` takes. */
  def accepts(function: String, t: DataType): Boolean = function match {
    case DateHistogram => t == TimestampType
    case _ => t match {
        case ByteType | ShortType | IntegerType | LongType | FloatType | DoubleType => true
        case _: DecimalType => true
        case _ => false
      }
  }

  def asDouble(v: Any): Double = v match {
    case b: Byte => b.toDouble
    case s: Short => s.toDouble
    case i: Int => i.toDouble
    case l: Long => l.toDouble
    case f: Float => f.toDouble
    case d: Double => d
    case d: Decimal => d.toDouble
    case other => throw IndexTablesErrors.internalError(s"not a number: $other")
  }

  private val Units =
    Seq("ms" -> 1000L, "s" -> 1000000L, "m" -> 60000000L, "h" -> 3600000000L, "d" -> 86400000000L)
  private val Duration = """([+-]?)(\d+)(ms|s|m|h|d)""".r

  /** `micros` in the largest unit that holds it whole (`1h`, `-30m`, `1500ms`). */
  def formatDuration(micros: Long): String = {
    val (unit, size) = Units.reverse.find(u => micros % u._2 == 0).getOrElse(Units.head)
    s"${micros / size}$unit"
  }

  /**
   * A fixed interval as Elasticsearch and tantivy write it (`30m`, `1h`, `1d`; units ms, s, m,
   * h, d), in microseconds; None if it is not one. A sign is allowed only where `signed`.
   */
  def parseDuration(s: String, signed: Boolean): Option[Long] = s.trim match {
    case Duration(sign, n, unit) if signed || sign.isEmpty =>
      Try(Math.multiplyExact(n.toLong, Units.toMap.apply(unit))).toOption
        .map(m => if (sign == "-") -m else m)
    case _ => None
  }
}

package io.indextables.spark.filters

import java.time.LocalDate

import org.apache.spark.sql.sources._
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.indextables.spark.schema.PartitionValues
import io.indextables.spark.stats.StatsValues
import io.indextables.spark.transaction.AddAction

/**
 * Decides on the driver which splits a query can skip: by partition values (exact) and by the
 * min/max statistics of data columns (conservative: a split is kept unless its statistics prove
 * no row can match), combined under AND/OR/NOT by the one [[FilterLogic]]. Anything it cannot
 * reason about keeps the split. Thread-safe.
 *
 * @param schema the table schema
 */
final class SplitPruner(
    schema: StructType,
    partitionColumns: Seq[String],
    timeZone: String,
    statsTruncatedAt: Int) {

  /**
   * True if a split with these partition values (null for SQL NULL) may hold a row that
   * satisfies every filter, judging by its partition values alone.
   */
  def mayMatchPartition(partitionValues: Map[String, String], filters: Seq[Filter]): Boolean =
    filters.filter(f => f.references.nonEmpty && allPartition(f)).forall { f =>
      FilterLogic.fold(f)(partitionOutcomes(partitionValues, _)).canBeTrue
    }

  /**
   * True if every filter is on partition columns only and is TRUE (not FALSE, not NULL) for
   * these partition values: then every row of a split with these values satisfies them all.
   */
  def isTrueForPartition(partitionValues: Map[String, String], filters: Seq[Filter]): Boolean =
    filters.forall { f =>
      f.references.nonEmpty && allPartition(f) && {
        val o = FilterLogic.fold(f)(partitionOutcomes(partitionValues, _))
        o.canBeTrue && !o.canBeFalse && !o.canBeNull
      }
    }

  /** True if some row of `add` may satisfy every filter. */
  def mayMatch(add: AddAction, filters: Seq[Filter]): Boolean = filters.forall { f =>
    FilterLogic.fold(f) { leaf =>
      if (leaf.references.nonEmpty && allPartition(leaf))
        partitionOutcomes(add.partitionValues, leaf)
      else statsOutcomes(add, leaf)
    }.canBeTrue
  }

  private def allPartition(f: Filter): Boolean = f.references.forall(partitionColumns.contains)

  /**
   * A partition filter on one split: every row has the same partition values, so the filter
   * has one value on all of them, computed here on the typed values (NULL for a null value);
   * Unknown when it cannot be computed.
   */
  private def partitionOutcomes(values: Map[String, String], f: Filter): Outcomes = {
    // Every partition filter names one column; its value is decoded once, when first needed.
    lazy val column = f.references.head
    lazy val pv: Any = PartitionValues.decode(
      values.get(column).flatMap(Option(_)).orNull,
      schema(column).dataType,
      timeZone)

    /** Some(Some(b)) for TRUE/FALSE, Some(None) for NULL, None when it cannot tell. */
    def cmp(v: Any)(ok: Int => Boolean): Option[Option[Boolean]] =
      if (pv == null || v == null) Some(None)
      else compareTyped(schema(column).dataType, pv, v).map(r => Some(ok(r)))
    def str(p: String => Boolean): Option[Option[Boolean]] = pv match {
      case null => Some(None)
      case s: UTF8String => Some(Some(p(s.toString)))
      case _ => None
    }
    val result: Option[Option[Boolean]] = f match {
      case EqualTo(_, v) => cmp(v)(_ == 0)
      case EqualNullSafe(_, v) =>
        if (v == null) Some(Some(pv == null))
        else if (pv == null) Some(Some(false))
        else cmp(v)(_ == 0)
      case GreaterThan(_, v) => cmp(v)(_ > 0)
      case GreaterThanOrEqual(_, v) => cmp(v)(_ >= 0)
      case LessThan(_, v) => cmp(v)(_ < 0)
      case LessThanOrEqual(_, v) => cmp(v)(_ <= 0)
      case In(_, vs) =>
        // SQL: NULL for a null value; TRUE if one literal equals; else NULL if one is null.
        if (pv == null) Some(None)
        else {
          val r = vs.map(v => cmp(v)(_ == 0))
          if (r.contains(Some(Some(true)))) Some(Some(true))
          else if (r.contains(None)) None
          else if (r.contains(Some(None))) Some(None)
          else Some(Some(false))
        }
      case IsNull(_) => Some(Some(pv == null))
      case IsNotNull(_) => Some(Some(pv != null))
      case StringStartsWith(_, p) => str(_.startsWith(p))
      case StringEndsWith(_, p) => str(_.endsWith(p))
      case StringContains(_, p) => str(_.contains(p))
      case _ => None
    }
    result.map(Outcomes.exactly).getOrElse(Outcomes.Unknown)
  }

  /** A data filter against min/max: proved never TRUE, or Unknown. */
  private def statsOutcomes(add: AddAction, f: Filter): Outcomes = {
    // Every filter judged here names one column; its bounds are parsed once, when first needed.
    lazy val bounds: Option[(Any, Any, Boolean)] = for {
      c <- f.references.headOption
      field <- schema.find(_.name == c)
      if StatsValues.hasStats(field.dataType)
      mins <- add.minValues; maxs <- add.maxValues
      lo <- mins.get(c).flatMap(Option(_)); hi <- maxs.get(c).flatMap(Option(_))
      l <- parse(field.dataType, lo); h <- parse(field.dataType, hi)
    } yield {
      // A truncated string max is only a prefix of the real max, and NaN (which Spark orders
      // above every number) is left out of floating statistics: either way the max is no bound.
      val maxUnusable = (field.dataType == StringType && hi.length >= statsTruncatedAt) ||
        field.dataType == DoubleType || field.dataType == FloatType
      (l, h, maxUnusable)
    }
    def range(c: String, v: Any)(outside: (Int, Int) => Boolean): Outcomes = bounds match {
      case Some((lo, hi, maxTruncated)) if v != null =>
        val dt = schema(c).dataType
        (compareTyped(dt, v, lo), compareTyped(dt, v, hi)) match {
          case (Some(a), Some(b)) =>
            // A truncated max is a prefix of the real max: only the lower side is usable.
            val b2 = if (maxTruncated) -1 else b
            if (outside(a, b2)) Outcomes.NeverTrue else Outcomes.Unknown
          case _ => Outcomes.Unknown
        }
      case _ => Outcomes.Unknown
    }
    f match {
      case EqualTo(c, v) => range(c, v)((toMin, toMax) => toMin < 0 || toMax > 0)
      case GreaterThan(c, v) => range(c, v)((_, toMax) => toMax >= 0)
      case GreaterThanOrEqual(c, v) => range(c, v)((_, toMax) => toMax > 0)
      case LessThan(c, v) => range(c, v)((toMin, _) => toMin <= 0)
      case LessThanOrEqual(c, v) => range(c, v)((toMin, _) => toMin < 0)
      case In(c, vs) if vs.nonEmpty =>
        if (vs.forall(v => range(c, v)((a, b) => a < 0 || b > 0) == Outcomes.NeverTrue))
          Outcomes.NeverTrue
        else Outcomes.Unknown
      case _ => Outcomes.Unknown
    }
  }

  private def parse(dt: DataType, s: String): Option[Any] =
    try {
      Some(dt match {
        case StringType => UTF8String.fromString(s)
        case ByteType | ShortType | IntegerType | LongType => s.toLong
        case DoubleType => s.toDouble
        // Writers record a float as Float.toString; read as a double, "0.7" lies above 0.7f.
        case FloatType => s.toFloat.toDouble
        case _: DecimalType => BigDecimal(s)
        case DateType => LocalDate.parse(s).toEpochDay
        case TimestampType => StatsValues.parseTimestamp(s)
      })
    } catch { case _: Exception => None }

  /** Compares a filter value (Scala/Java external type) with a parsed statistic or partition value. */
  private def compareTyped(dt: DataType, a: Any, b: Any): Option[Int] = {
    def num(x: Any): Option[BigDecimal] = x match {
      case i: Int => Some(BigDecimal(i)); case l: Long => Some(BigDecimal(l))
      case s: Short => Some(BigDecimal(s.toInt)); case y: Byte => Some(BigDecimal(y.toInt))
      case d: Double if !d.isNaN && !d.isInfinite => Some(BigDecimal(d))
      case f: Float if !f.isNaN && !f.isInfinite => Some(BigDecimal(f.toDouble))
      case d: BigDecimal => Some(d); case d: java.math.BigDecimal => Some(BigDecimal(d))
      case d: Decimal => Some(d.toBigDecimal)
      case _ => None
    }
    def day(x: Any): Option[Long] = x match {
      case d: java.sql.Date => Some(d.toLocalDate.toEpochDay);
      case d: LocalDate => Some(d.toEpochDay)
      case i: Int => Some(i.toLong); case l: Long => Some(l); case _ => None
    }
    def micros(x: Any): Option[Long] = x match {
      case t: java.sql.Timestamp =>
        Some(Math.floorDiv(t.getTime, 1000L) * 1000000L + t.getNanos / 1000)
      case i: java.time.Instant => Some(i.getEpochSecond * 1000000L + i.getNano / 1000)
      case l: Long => Some(l); case _ => None
    }
    def str(x: Any): Option[UTF8String] = x match {
      case s: String => Some(UTF8String.fromString(s)); case u: UTF8String => Some(u);
      case _ => None
    }
    dt match {
      case StringType => for (x <- str(a); y <- str(b)) yield x.compareTo(y)
      case DateType => for (x <- day(a); y <- day(b)) yield java.lang.Long.compare(x, y)
      case TimestampType => for (x <- micros(a); y <- micros(b)) yield java.lang.Long.compare(x, y)
      case BooleanType => (a, b) match {
          case (x: Boolean, y: Boolean) => Some(java.lang.Boolean.compare(x, y)); case _ => None
        }
      case _ => for (x <- num(a); y <- num(b)) yield x.compare(y)
    }
  }
}

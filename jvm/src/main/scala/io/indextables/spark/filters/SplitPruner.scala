package io.indextables.spark.filters

import java.time.LocalDate

import org.apache.spark.sql.catalyst.expressions.{Cast, Literal}
import org.apache.spark.sql.sources._
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.indextables.spark.stats.StatsValues
import io.indextables.spark.transaction.AddAction

/**
 * Decides on the driver which splits a query can skip: by partition values (exact) and by the
 * min/max statistics of data columns (conservative: a split is kept unless its statistics prove
 * no row can match). Anything it cannot reason about keeps the split. Thread-safe.
 *
 * @param schema the table schema
 */
final class SplitPruner(schema: StructType, partitionColumns: Seq[String], timeZone: String,
    statsTruncatedAt: Int) {

  /**
   * True if a split with these partition values (null for SQL NULL) may hold a row that
   * satisfies every filter, judging by its partition values alone.
   */
  def mayMatchPartition(partitionValues: Map[String, String], filters: Seq[Filter]): Boolean =
    mayMatch(AddAction("", partitionValues, 0L, 0L, dataChange = false),
      filters.filter(f => f.references.nonEmpty && allPartition(f)))

  /** True if some row of `add` may satisfy every filter. */
  def mayMatch(add: AddAction, filters: Seq[Filter]): Boolean = filters.forall(f => eval(add, f) != False)

  private sealed trait Tri
  private case object True extends Tri
  private case object False extends Tri
  private case object Unknown extends Tri

  private def eval(add: AddAction, f: Filter): Tri = f match {
    case And(l, r) => (eval(add, l), eval(add, r)) match {
      case (False, _) | (_, False) => False
      case (True, True) => True
      case _ => Unknown
    }
    case Or(l, r) => (eval(add, l), eval(add, r)) match {
      case (True, _) | (_, True) => True
      case (False, False) => False
      case _ => Unknown
    }
    // False means no row is TRUE: each is FALSE or, over a null partition value, NULL. NOT
    // of FALSE is TRUE and NOT of NULL is NULL, so only True can be inverted to False.
    case Not(c) => if (allPartition(c)) eval(add, c) match {
      case True => False
      case False => Unknown
      case Unknown => Unknown
    } else Unknown
    case _ if f.references.nonEmpty && allPartition(f) => partitionEval(add, f)
    case _ => statsEval(add, f)
  }

  private def allPartition(f: Filter): Boolean = f.references.forall(partitionColumns.contains)

  /** Partition filters: evaluate the filter on the split's typed partition values. */
  private def partitionEval(add: AddAction, f: Filter): Tri = {
    def value(c: String): Any = add.partitionValues.get(c).flatMap(Option(_)) match {
      case None => null
      case Some(s) => Cast(Literal.create(s, StringType), schema(c).dataType, Some(timeZone)).eval()
    }
    def cmp(c: String, v: Any)(ok: Int => Boolean): Tri = {
      val pv = value(c)
      if (pv == null || v == null) False
      else compareTyped(schema(c).dataType, pv, v).map(r => if (ok(r)) True else False).getOrElse(Unknown)
    }
    f match {
      case EqualTo(c, v) => cmp(c, v)(_ == 0)
      case EqualNullSafe(c, v) =>
        if (v == null) { if (value(c) == null) True else False } else cmp(c, v)(_ == 0)
      case GreaterThan(c, v) => cmp(c, v)(_ > 0)
      case GreaterThanOrEqual(c, v) => cmp(c, v)(_ >= 0)
      case LessThan(c, v) => cmp(c, v)(_ < 0)
      case LessThanOrEqual(c, v) => cmp(c, v)(_ <= 0)
      case In(c, vs) =>
        val r = vs.map(v => cmp(c, v)(_ == 0))
        if (r.contains(True)) True else if (r.forall(_ == False)) False else Unknown
      case IsNull(c) => if (value(c) == null) True else False
      case IsNotNull(c) => if (value(c) == null) False else True
      case StringStartsWith(c, p) => strEval(value(c), _.startsWith(p))
      case StringEndsWith(c, p) => strEval(value(c), _.endsWith(p))
      case StringContains(c, p) => strEval(value(c), _.contains(p))
      case _ => Unknown
    }
  }

  private def strEval(v: Any, p: String => Boolean): Tri = v match {
    case null => False
    case s: UTF8String => if (p(s.toString)) True else False
    case _ => Unknown
  }

  /** Data filters against min/max: only ever False (proved empty) or Unknown. */
  private def statsEval(add: AddAction, f: Filter): Tri = {
    def bounds(c: String): Option[(Any, Any, Boolean)] = for {
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
    def range(c: String, v: Any)(outside: (Int, Int) => Boolean): Tri = bounds(c) match {
      case Some((lo, hi, maxTruncated)) if v != null =>
        val dt = schema(c).dataType
        (compareTyped(dt, v, lo), compareTyped(dt, v, hi)) match {
          case (Some(a), Some(b)) =>
            // A truncated max is a prefix of the real max: only the lower side is usable.
            val b2 = if (maxTruncated) -1 else b
            if (outside(a, b2)) False else Unknown
          case _ => Unknown
        }
      case _ => Unknown
    }
    f match {
      case EqualTo(c, v) => range(c, v)((toMin, toMax) => toMin < 0 || toMax > 0)
      case GreaterThan(c, v) => range(c, v)((_, toMax) => toMax >= 0)
      case GreaterThanOrEqual(c, v) => range(c, v)((_, toMax) => toMax > 0)
      case LessThan(c, v) => range(c, v)((toMin, _) => toMin <= 0)
      case LessThanOrEqual(c, v) => range(c, v)((toMin, _) => toMin < 0)
      case In(c, vs) if vs.nonEmpty =>
        if (vs.forall(v => range(c, v)((a, b) => a < 0 || b > 0) == False)) False else Unknown
      case _ => Unknown
    }
  }

  private def parse(dt: DataType, s: String): Option[Any] = try {
    Some(dt match {
      case StringType => UTF8String.fromString(s)
      case IntegerType | LongType => s.toLong
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
      case d: java.sql.Date => Some(d.toLocalDate.toEpochDay); case d: LocalDate => Some(d.toEpochDay)
      case i: Int => Some(i.toLong); case l: Long => Some(l); case _ => None
    }
    def micros(x: Any): Option[Long] = x match {
      case t: java.sql.Timestamp => Some(Math.floorDiv(t.getTime, 1000L) * 1000000L + t.getNanos / 1000)
      case i: java.time.Instant => Some(i.getEpochSecond * 1000000L + i.getNano / 1000)
      case l: Long => Some(l); case _ => None
    }
    def str(x: Any): Option[UTF8String] = x match {
      case s: String => Some(UTF8String.fromString(s)); case u: UTF8String => Some(u); case _ => None
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

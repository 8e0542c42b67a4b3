package io.indextables.spark.read.aggregate

import scala.collection.mutable

import org.apache.spark.sql.types.{ByteType, DateType, DoubleType, FloatType, IntegerType, LongType, ShortType, TimestampType}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.read.aggregate.PushedMetric._

/**
 * Folds rows into the partial values of a pushed aggregation, group by group, with Spark's own
 * semantics (a null value is skipped; an empty SUM, MIN or MAX is null; NaN is the largest
 * double). What a split computes from its fetched rows when tantivy cannot answer exactly, and
 * the reference the native answers are tested against. Values are Spark's internal ones. Not
 * thread-safe; one per split read.
 */
final class PartialAggregator(metrics: Seq[PushedMetric]) {
  private val groups = mutable.LinkedHashMap.empty[Seq[Any], Array[Any]]

  /** Adds one row of group `key`; `value(i)` is the row's value of metric i's column. */
  def add(key: Seq[Any], value: Int => Any): Unit = {
    val acc = groups.getOrElseUpdate(key, initial())
    var i = 0
    while (i < metrics.length) {
      acc(i) = step(metrics(i), acc(i), if (metrics(i) == CountAll) null else value(i))
      i += 1
    }
  }

  /** Every group seen, in first-seen order, with its partial values. */
  def result: Seq[(Seq[Any], Array[Any])] = groups.toSeq

  private def initial(): Array[Any] = PartialAggregator.empty(metrics)

  private def step(m: PushedMetric, acc: Any, v: Any): Any = m match {
    case CountAll => acc.asInstanceOf[Long] + 1
    case CountOf(_) => if (v == null) acc else acc.asInstanceOf[Long] + 1
    case _ if v == null => acc
    case SumOf(_, t) if PushedMetric.isIntegral(t) =>
      PartialAggregator.combine(m, acc, PartialAggregator.asLong(v))
    case SumOf(_, _) => PartialAggregator.combine(m, acc, PartialAggregator.asDouble(v))
    case _ => PartialAggregator.combine(m, acc, v)
  }
}

object PartialAggregator {

  /** The partials of no rows: counts 0, the others NULL. */
  def empty(metrics: Seq[PushedMetric]): Array[Any] = metrics.map {
    case CountAll | CountOf(_) => 0L: Any
    case _ => null
  }.toArray

  /**
   * Two partial values of metric `m` as one, with Spark's semantics: a NULL partial (no value)
   * yields the other; counts and sums add, MIN and MAX keep Spark's smaller or larger. The one
   * place partials combine: a split's rows fold through it, and the driver merges the splits'
   * partials through it.
   */
  def combine(m: PushedMetric, a: Any, b: Any): Any =
    if (a == null) b
    else if (b == null) a
    else m match {
      case CountAll | CountOf(_) => a.asInstanceOf[Long] + b.asInstanceOf[Long]
      case SumOf(_, t) if PushedMetric.isIntegral(t) => a.asInstanceOf[Long] + b.asInstanceOf[Long]
      case SumOf(_, _) => a.asInstanceOf[Double] + b.asInstanceOf[Double]
      case MinOf(_, t) => if (compare(t, b, a) < 0) b else a
      case MaxOf(_, t) => if (compare(t, b, a) > 0) b else a
    }
  private def asLong(v: Any): Long = v match {
    case i: Int => i.toLong
    case l: Long => l
    case s: Short => s.toLong
    case b: Byte => b.toLong
    case other => throw IndexTablesErrors.internalError(s"not an integer: $other")
  }

  private def asDouble(v: Any): Double = v match {
    case d: Double => d
    case f: Float => f.toDouble
    case other => throw IndexTablesErrors.internalError(s"not a floating value: $other")
  }

  /** Spark's ordering of values of type `t` (NaN above every number). */
  def compare(t: org.apache.spark.sql.types.DataType, a: Any, b: Any): Int = t match {
    case IntegerType | DateType => Integer.compare(a.asInstanceOf[Int], b.asInstanceOf[Int])
    case ShortType => java.lang.Short.compare(a.asInstanceOf[Short], b.asInstanceOf[Short])
    case ByteType => java.lang.Byte.compare(a.asInstanceOf[Byte], b.asInstanceOf[Byte])
    case LongType | TimestampType =>
      java.lang.Long.compare(a.asInstanceOf[Long], b.asInstanceOf[Long])
    case DoubleType => org.apache.spark.sql.catalyst.util.SQLOrderingUtil
        .compareDoubles(a.asInstanceOf[Double], b.asInstanceOf[Double])
    case FloatType => org.apache.spark.sql.catalyst.util.SQLOrderingUtil
        .compareFloats(a.asInstanceOf[Float], b.asInstanceOf[Float])
    case other => throw IndexTablesErrors.internalError(s"MIN/MAX of $other is not pushed")
  }
}

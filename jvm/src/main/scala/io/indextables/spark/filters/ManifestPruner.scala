package io.indextables.spark.filters

import org.apache.spark.sql.sources._
import org.apache.spark.sql.types._

import io.indextables.spark.schema.PartitionValues
import io.indextables.spark.transaction.state.PartitionBounds

/**
 * Decides whether an Avro state manifest can hold a split that the partition filters of a read
 * accept, from the manifest's partition bounds: the least and greatest partition value of each
 * column over its splits, compared as strings, nulls left out.
 *
 * Conservative: it answers false only when no split of the manifest can satisfy the filters.
 * Because the bounds are string extremes, ranges are judged only on string columns whose values
 * sort the same as strings and as Spark compares them (no surrogate pairs), and on date columns
 * (`yyyy-MM-dd` sorts by date); equality and IN also on integral and boolean columns, whose
 * partition values are written in one canonical form. AND, OR and NOT combine leaves by the one
 * [[FilterLogic]]. Anything else keeps the manifest. Thread-safe.
 */
final class ManifestPruner(schema: StructType, partitionColumns: Seq[String]) {

  private val types: Map[String, DataType] =
    partitionColumns.flatMap(c => schema.find(_.name == c).map(f => c -> f.dataType)).toMap

  /** True if a split under `bounds` may satisfy every filter of `filters`. */
  def mayMatch(bounds: Map[String, PartitionBounds], filters: Seq[Filter]): Boolean =
    filters.forall(f => FilterLogic.fold(f)(outcomes(bounds, _)).canBeTrue)

  /**
   * What the bounds tell of one leaf over the manifest's splits: NULL everywhere for a
   * null-rejecting filter on a column that is null in every split, never TRUE when no value in
   * the bounds can make it TRUE, else Unknown.
   */
  private def outcomes(bounds: Map[String, PartitionBounds], f: Filter): Outcomes =
    if (FilterLogic.nullRejecting(f) && f.references.length == 1 &&
      bounds.get(f.references.head).contains(PartitionBounds(None, None))) Outcomes.AlwaysNull
    else if (possible(bounds, f)) Outcomes.Unknown
    else Outcomes.NeverTrue

  /** False only when no split under `bounds` can make the leaf `f` TRUE. */
  private def possible(bounds: Map[String, PartitionBounds], f: Filter): Boolean = f match {
    case EqualTo(c, v) =>
      compare(bounds, c, v, equality = true)(s => (lo, hi) => lo <= s && s <= hi)
    case EqualNullSafe(c, v) if v != null =>
      compare(bounds, c, v, equality = true)(s => (lo, hi) => lo <= s && s <= hi)
    case In(c, vs) =>
      vs.exists(v =>
        v != null &&
          compare(bounds, c, v, equality = true)(s => (lo, hi) => lo <= s && s <= hi))
    case GreaterThan(c, v) => compare(bounds, c, v, equality = false)(s => (_, hi) => hi > s)
    case GreaterThanOrEqual(c, v) =>
      compare(bounds, c, v, equality = false)(s => (_, hi) => hi >= s)
    case LessThan(c, v) => compare(bounds, c, v, equality = false)(s => (lo, _) => lo < s)
    case LessThanOrEqual(c, v) => compare(bounds, c, v, equality = false)(s => (lo, _) => lo <= s)
    case StringStartsWith(c, prefix) if ordered(c, prefix) =>
      // Some value in [lo, hi] starts with prefix only if hi >= prefix and lo <= prefix + max.
      withBounds(bounds, c) { (lo, hi) =>
        hasSurrogate(lo) || hasSurrogate(hi) || (hi >= prefix && lo.take(prefix.length) <= prefix)
      }
    case _ => true
  }

  /**
   * Applies `test` to the literal's canonical string when the column's bounds are known and
   * comparable for this kind of test; a comparison with NULL is never TRUE.
   */
  private def compare(bounds: Map[String, PartitionBounds], c: String, v: Any, equality: Boolean)(
      test: String => (String, String) => Boolean): Boolean =
    if (v == null) false
    else canonical(c, v, equality) match {
      case Some(s) => withBounds(bounds, c) { (lo, hi) =>
          // Bounds with surrogates may order differently from Spark, except for equality.
          if (!equality && (hasSurrogate(lo) || hasSurrogate(hi))) true else test(s)(lo, hi)
        }
      case None => true
    }

  private def withBounds(bounds: Map[String, PartitionBounds], c: String)(
      test: (String, String) => Boolean): Boolean =
    bounds.get(c) match {
      case Some(PartitionBounds(Some(lo), Some(hi))) => test(lo, hi)
      // Known bounds of no value: every split of the manifest has NULL here.
      case Some(PartitionBounds(None, None)) => false
      case _ => true
    }

  /**
   * The partition value string a split would carry for `v`, if comparisons on it are sound:
   * equality on every canonical type, order only where string order is Spark's (strings without
   * surrogates, ISO dates).
   */
  private def canonical(c: String, v: Any, equality: Boolean): Option[String] =
    types.get(c).flatMap { dt =>
      PartitionValues.encodeLiteral(dt, v).filter { s =>
        equality || dt == DateType || (dt == StringType && ordered(c, s))
      }
    }

  /** String order agrees with Spark's byte order only without surrogates (supplementary chars). */
  private def ordered(c: String, s: String): Boolean =
    types.get(c).contains(StringType) && !hasSurrogate(s)

  private def hasSurrogate(s: String): Boolean = s.exists(ch => Character.isSurrogate(ch))
}

package io.indextables.spark.filters

import org.apache.spark.sql.sources._

/**
 * An algebra for SQL's three-valued AND, OR and NOT over some description `A` of a predicate:
 * the truth values it can take over a set of rows ([[Outcomes]]), or the native queries that
 * find its TRUE and FALSE rows ([[QuerySides]]).
 */
trait ThreeValued[A] {
  def and(left: A, right: A): A
  def or(left: A, right: A): A
  def not(child: A): A
}

/**
 * Which SQL truth values a predicate may take over the rows of a set (a split, or all splits of
 * a manifest). A pruner keeps the set unless it proves `canBeTrue` false. Immutable.
 */
final case class Outcomes(canBeTrue: Boolean, canBeFalse: Boolean, canBeNull: Boolean)

object Outcomes {

  /** Nothing is known: any row may make the predicate TRUE, FALSE or NULL. */
  val Unknown: Outcomes = Outcomes(canBeTrue = true, canBeFalse = true, canBeNull = true)

  /** Proved never TRUE: every row makes it FALSE or NULL. */
  val NeverTrue: Outcomes = Outcomes(canBeTrue = false, canBeFalse = true, canBeNull = true)

  /** Proved NULL on every row (a null-rejecting predicate over a column that is always null). */
  val AlwaysNull: Outcomes = Outcomes(canBeTrue = false, canBeFalse = false, canBeNull = true)

  /** The one value a predicate takes on every row: TRUE, FALSE, or NULL (None). */
  def exactly(value: Option[Boolean]): Outcomes = value match {
    case Some(true) => Outcomes(canBeTrue = true, canBeFalse = false, canBeNull = false)
    case Some(false) => Outcomes(canBeTrue = false, canBeFalse = true, canBeNull = false)
    case None => AlwaysNull
  }

  /** Kleene's tables applied to every pair of possible values. */
  implicit val logic: ThreeValued[Outcomes] = new ThreeValued[Outcomes] {
    override def and(l: Outcomes, r: Outcomes): Outcomes = Outcomes(
      canBeTrue = l.canBeTrue && r.canBeTrue,
      canBeFalse = l.canBeFalse || r.canBeFalse,
      canBeNull = (l.canBeNull && (r.canBeTrue || r.canBeNull)) ||
        (r.canBeNull && (l.canBeTrue || l.canBeNull))
    )

    override def or(l: Outcomes, r: Outcomes): Outcomes = Outcomes(
      canBeTrue = l.canBeTrue || r.canBeTrue,
      canBeFalse = l.canBeFalse && r.canBeFalse,
      canBeNull = (l.canBeNull && (r.canBeFalse || r.canBeNull)) ||
        (r.canBeNull && (l.canBeFalse || l.canBeNull))
    )

    override def not(c: Outcomes): Outcomes = Outcomes(c.canBeFalse, c.canBeTrue, c.canBeNull)
  }
}

/**
 * The one walk of a filter's boolean structure with SQL's three-valued logic, shared by the
 * partition pruner, the statistics pruner, the manifest pruner and the query translation (which
 * differ only in what they know of a leaf), and the one list of null-rejecting filters.
 * Stateless and thread-safe.
 */
object FilterLogic {

  /** Folds the AND/OR/NOT structure of `filter`; every other node is a leaf for `leaf`. */
  def fold[A](filter: Filter)(leaf: Filter => A)(implicit logic: ThreeValued[A]): A = filter match {
    case And(l, r) => logic.and(fold(l)(leaf), fold(r)(leaf))
    case Or(l, r) => logic.or(fold(l)(leaf), fold(r)(leaf))
    case Not(c) => logic.not(fold(c)(leaf))
    case other => leaf(other)
  }

  /** Folds an IndexQuery tree the same way; its leaves are regular filters and IndexQueries. */
  def foldMixed[A](filter: MixedBooleanFilter)(leaf: MixedBooleanFilter => A)(
      implicit logic: ThreeValued[A]): A = filter match {
    case MixedBooleanFilter.And(l, r) => logic.and(foldMixed(l)(leaf), foldMixed(r)(leaf))
    case MixedBooleanFilter.Or(l, r) => logic.or(foldMixed(l)(leaf), foldMixed(r)(leaf))
    case MixedBooleanFilter.Not(c) => logic.not(foldMixed(c)(leaf))
    case other => leaf(other)
  }

  /**
   * True for a leaf that is NULL, never TRUE or FALSE, wherever its column is null: a comparison
   * or string match of one column with literals.
   */
  def nullRejecting(f: Filter): Boolean = f match {
    case EqualTo(_, _) | In(_, _) | GreaterThan(_, _) | GreaterThanOrEqual(_, _) |
        LessThan(_, _) | LessThanOrEqual(_, _) | StringStartsWith(_, _) | StringEndsWith(_, _) |
        StringContains(_, _) => true
    case _ => false
  }

  /** True for a leaf that is never NULL: TRUE or FALSE on every row. */
  def neverNull(f: Filter): Boolean = f match {
    case IsNull(_) | IsNotNull(_) | EqualNullSafe(_, _) => true
    case _ => false
  }

  /**
   * True for a null-rejecting leaf whose literals are all non-null: then it is FALSE exactly
   * where its column is not null and it is not TRUE (with a null literal it is never FALSE).
   * Each null-rejecting filter holds its column, then its literal or array of literals.
   */
  def falseWhereNotTrue(f: Filter): Boolean = nullRejecting(f) && (f match {
    case leaf: Product =>
      leaf.productIterator.drop(1).forall {
        case values: Array[_] => !values.exists(_ == null)
        case value => value != null
      }
    case _ => false
  })
}

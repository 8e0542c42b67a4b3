package io.indextables.spark.filters

import io.indextables.tantivy4java.split.{SplitBooleanQuery, SplitMatchAllQuery, SplitQuery}

/**
 * The native queries of one node of a filter: `whenTrue` finds the rows where it is TRUE and
 * `whenFalse` the rows where it is FALSE (under three-valued logic, NOT of a node is TRUE exactly
 * where the node is FALSE, not where it is NULL). Each is a superset unless marked exact, or None
 * when no query can find even a superset. Both are computed on first use only, so that a leaf
 * whose FALSE side cannot be built fails only when a NOT above it asks for that side.
 */
final class QuerySides(t: => Option[TranslatedFilter], f: => Option[TranslatedFilter]) {
  lazy val whenTrue: Option[TranslatedFilter] = t
  lazy val whenFalse: Option[TranslatedFilter] = f
}

object QuerySides {

  /** AND: TRUE where both are TRUE, FALSE where either is FALSE; OR the other way round. */
  implicit val logic: ThreeValued[QuerySides] = new ThreeValued[QuerySides] {
    override def and(l: QuerySides, r: QuerySides): QuerySides =
      new QuerySides(all(l.whenTrue, r.whenTrue), any(l.whenFalse, r.whenFalse))

    override def or(l: QuerySides, r: QuerySides): QuerySides =
      new QuerySides(any(l.whenTrue, r.whenTrue), all(l.whenFalse, r.whenFalse))

    override def not(c: QuerySides): QuerySides = new QuerySides(c.whenFalse, c.whenTrue)
  }

  /** Rows in both; with one side unknown, the other side is a superset of them. */
  private def all(
      a: Option[TranslatedFilter],
      b: Option[TranslatedFilter]): Option[TranslatedFilter] =
    (a, b) match {
      case (Some(x), Some(y)) =>
        Some(TranslatedFilter(
          new SplitBooleanQuery().addMust(x.query).addMust(y.query),
          x.exact && y.exact))
      case (Some(x), None) => Some(x.copy(exact = false))
      case (None, Some(y)) => Some(y.copy(exact = false))
      case _ => None
    }

  /** Rows in either; a superset of a union needs supersets of both sides. */
  private def any(
      a: Option[TranslatedFilter],
      b: Option[TranslatedFilter]): Option[TranslatedFilter] =
    for (x <- a; y <- b) yield TranslatedFilter(
      new SplitBooleanQuery().addShould(x.query).addShould(y.query),
      x.exact && y.exact)

  /** No row. */
  def none: SplitQuery = allBut(new SplitMatchAllQuery())

  /** Every row that `q` does not match. */
  def allBut(q: SplitQuery): SplitQuery =
    new SplitBooleanQuery().addMust(new SplitMatchAllQuery()).addMustNot(q)
}

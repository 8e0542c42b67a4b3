package io.indextables.spark.filters

import org.apache.spark.sql.sources._
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.tantivy4java.split.SplitTermQuery

/** The one three-valued fold: Kleene's truth tables, exhaustively, and the null-rejection lists. */
class FilterLogicSuite extends AnyFunSuite {

  /** SQL's AND, OR and NOT over TRUE / FALSE / NULL (None), written out as the standard says. */
  private def sqlAnd(a: Option[Boolean], b: Option[Boolean]): Option[Boolean] = (a, b) match {
    case (Some(false), _) | (_, Some(false)) => Some(false)
    case (Some(true), Some(true)) => Some(true)
    case _ => None
  }
  private def sqlOr(a: Option[Boolean], b: Option[Boolean]): Option[Boolean] = (a, b) match {
    case (Some(true), _) | (_, Some(true)) => Some(true)
    case (Some(false), Some(false)) => Some(false)
    case _ => None
  }
  private def sqlNot(a: Option[Boolean]): Option[Boolean] = a.map(!_)

  private val values: Seq[Option[Boolean]] = Seq(Some(true), Some(false), None)
  private val logic = Outcomes.logic

  private def set(o: Outcomes): Set[Option[Boolean]] =
    Set(Some(true)).filter(_ => o.canBeTrue) ++ Set(Some(false)).filter(_ => o.canBeFalse) ++
      Set(None).filter(_ => o.canBeNull)
  private def outcomes(s: Set[Option[Boolean]]): Outcomes =
    Outcomes(s.contains(Some(true)), s.contains(Some(false)), s.contains(None))

  /** Every non-empty set of truth values. */
  private val sets: Seq[Set[Option[Boolean]]] = values.toSet.subsets().filter(_.nonEmpty).toSeq

  test("on single values, AND, OR and NOT are Kleene's tables") {
    for (a <- values; b <- values) {
      assert(set(logic.and(Outcomes.exactly(a), Outcomes.exactly(b))) === Set(sqlAnd(a, b)), (a, b))
      assert(set(logic.or(Outcomes.exactly(a), Outcomes.exactly(b))) === Set(sqlOr(a, b)), (a, b))
    }
    values.foreach(a => assert(set(logic.not(Outcomes.exactly(a))) === Set(sqlNot(a)), a))
  }

  test("on sets of possible values, each result is exactly the set of pointwise results") {
    for (x <- sets; y <- sets) {
      val pairs = for (a <- x; b <- y) yield (a, b)
      assert(set(logic.and(outcomes(x), outcomes(y))) === pairs.map { case (a, b) => sqlAnd(a, b) })
      assert(set(logic.or(outcomes(x), outcomes(y))) === pairs.map { case (a, b) => sqlOr(a, b) })
    }
    sets.foreach(x => assert(set(logic.not(outcomes(x))) === x.map(sqlNot)))
  }

  test("the fold walks AND, OR and NOT of V1 filters and hands every other node to the leaf") {
    val a = EqualTo("a", 1)
    val b = IsNull("b")
    val c = StringContains("c", "x")
    val known = Map[Filter, Option[Boolean]](a -> Some(true), b -> None, c -> Some(false))
    val tree = Or(And(a, Not(b)), Not(c))
    val seen = scala.collection.mutable.Buffer.empty[Filter]
    val r = FilterLogic.fold(tree) { leaf => seen += leaf; Outcomes.exactly(known(leaf)) }
    assert(seen.toSet === Set(a, b, c))
    // (TRUE AND NOT NULL) OR NOT FALSE = NULL OR TRUE = TRUE
    assert(set(r) === Set(Some(true)))
  }

  test("a NOT over a leaf that is never TRUE can only be pruned when the leaf is always NULL") {
    assert(logic.not(Outcomes.NeverTrue).canBeTrue)
    assert(!logic.not(Outcomes.AlwaysNull).canBeTrue)
    assert(!logic.and(Outcomes.Unknown, Outcomes.NeverTrue).canBeTrue)
    assert(logic.or(Outcomes.Unknown, Outcomes.NeverTrue).canBeTrue)
  }

  test("null rejection: comparisons and string matches are NULL on a null column; IS NULL and <=> never are") {
    val rejecting = Seq(
      EqualTo("a", 1),
      In("a", Array(1, 2)),
      GreaterThan("a", 1),
      GreaterThanOrEqual("a", 1),
      LessThan("a", 1),
      LessThanOrEqual("a", 1),
      StringStartsWith("a", "x"),
      StringEndsWith("a", "x"),
      StringContains("a", "x")
    )
    val neverNull = Seq(IsNull("a"), IsNotNull("a"), EqualNullSafe("a", 1))
    rejecting.foreach { f =>
      assert(FilterLogic.nullRejecting(f), f)
      assert(!FilterLogic.neverNull(f), f)
      assert(FilterLogic.falseWhereNotTrue(f), f)
    }
    neverNull.foreach { f =>
      assert(!FilterLogic.nullRejecting(f), f)
      assert(FilterLogic.neverNull(f), f)
    }
    // With a NULL literal a comparison is never FALSE, so its FALSE rows are not "the rest".
    assert(!FilterLogic.falseWhereNotTrue(EqualTo("a", null)))
    assert(!FilterLogic.falseWhereNotTrue(In("a", Array(1, null))))
    assert(!FilterLogic.nullRejecting(And(EqualTo("a", 1), EqualTo("b", 2))))
  }

  test("query sides: NOT swaps, AND keeps a superset of one known side, OR needs both") {
    val q = TranslatedFilter(new SplitTermQuery("a", "x"), exact = true)
    val known = new QuerySides(Some(q), Some(q.copy(exact = false)))
    val unknown = new QuerySides(None, None)
    val sides = QuerySides.logic
    assert(sides.not(known).whenTrue.map(_.exact) === Some(false))
    assert(sides.not(known).whenFalse.map(_.exact) === Some(true))
    assert(sides.and(known, unknown).whenTrue.map(_.exact) === Some(false))
    assert(sides.and(known, known).whenTrue.map(_.exact) === Some(true))
    assert(sides.or(known, unknown).whenTrue === None)
    assert(sides.or(known, unknown).whenFalse.map(_.exact) === Some(false))
    assert(sides.and(known, unknown).whenFalse === None)
  }

  test("a side is computed only when asked for") {
    var asked = 0
    val lazySide =
      new QuerySides({ asked += 1; None }, throw new AssertionError("FALSE side built"))
    assert(lazySide.whenTrue.isEmpty && lazySide.whenTrue.isEmpty)
    assert(asked === 1)
  }
}

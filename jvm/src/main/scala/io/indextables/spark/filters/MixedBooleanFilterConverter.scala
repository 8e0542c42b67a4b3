package io.indextables.spark.filters

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.schema.{IndexKind, TableIndexSchema}
import io.indextables.tantivy4java.split.SplitQuery

/**
 * Translates a [[MixedBooleanFilter]] into one native query matching exactly the rows for which
 * the tree is TRUE. The tree is walked by the one [[FilterLogic]] with [[QuerySides]]: every
 * node has the rows where it is TRUE and the rows where it is FALSE, and NOT swaps them.
 *  - An IndexQuery predicate is never null: FALSE is every row it does not match.
 *  - A regular filter is translated as Spark's pushdown translates it, but here both of its
 *    sides must be exact (its FALSE side only when a NOT asks for it); a null column makes a
 *    comparison null, never FALSE.
 * A regular filter that cannot be translated exactly fails with an error naming it: the tree
 * cannot be split between Spark and the index, because Spark cannot evaluate an IndexQuery.
 *
 * @param parse parses an IndexQuery string with the given default fields (errors quote it)
 */
final class MixedBooleanFilterConverter(
    schema: TableIndexSchema,
    parse: (String, Seq[String]) => SplitQuery) {

  private val regular = new FiltersToQueryConverter(schema)

  /** The fields `indexqueryall` searches: every string and text field. */
  def allFields: Seq[String] = schema.fields.collect {
    case f if f.kind == IndexKind.Text || f.kind == IndexKind.RawString => f.name
  }

  def toQuery(f: MixedBooleanFilter): SplitQuery =
    FilterLogic.foldMixed(f)(leaf).whenTrue.filter(_.exact).map(_.query)
      .getOrElse(throw IndexTablesErrors.indexQueryWithInexact(f.toString))

  private def leaf(f: MixedBooleanFilter): QuerySides = f match {
    case MixedBooleanFilter.IndexQueryFilter(column, query, _) =>
      indexQuery(parse(query, Seq(column)))
    case MixedBooleanFilter.IndexQueryAllFilter(query) => indexQuery(parse(query, allFields))
    case MixedBooleanFilter.Regular(filter) =>
      val sides = regular.sides(filter)
      new QuerySides(
        Some(exact(sides.whenTrue, filter.toString)),
        Some(exact(sides.whenFalse, s"NOT ($filter)")))
    case other => throw IndexTablesErrors.indexQueryInUnsupportedExpression(other.toString)
  }

  private def indexQuery(q: SplitQuery): QuerySides = {
    val matched = TranslatedFilter(q, exact = true)
    new QuerySides(Some(matched), Some(TranslatedFilter(QuerySides.allBut(q), exact = true)))
  }

  private def exact(t: Option[TranslatedFilter], shown: String): TranslatedFilter =
    t.filter(_.exact).getOrElse(throw IndexTablesErrors.indexQueryWithInexact(shown))
}

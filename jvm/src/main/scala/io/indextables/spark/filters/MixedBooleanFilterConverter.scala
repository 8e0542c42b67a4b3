package io.indextables.spark.filters

import org.apache.spark.sql.sources._

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.schema.{IndexKind, TableIndexSchema}
import io.indextables.tantivy4java.split.{SplitBooleanQuery, SplitExistsQuery, SplitMatchAllQuery, SplitQuery}

/**
 * Translates a [[MixedBooleanFilter]] into one native query matching exactly the rows for which
 * the tree is TRUE. Under SQL's three-valued logic NOT(p) is TRUE only where p is FALSE (not
 * where p is null), so every node gets two queries: the rows where it is TRUE, and the rows
 * where it is FALSE.
 *  - AND: TRUE = both TRUE, FALSE = either FALSE; OR the other way round; NOT swaps them.
 *  - An IndexQuery predicate is never null: FALSE is every row it does not match.
 *  - A regular filter must translate exactly; its FALSE rows are those whose column exists and
 *    which it does not match (a null column makes a comparison null, never FALSE).
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

  def toQuery(f: MixedBooleanFilter): SplitQuery = whenTrue(f)

  private def whenTrue(f: MixedBooleanFilter): SplitQuery = f match {
    case MixedBooleanFilter.And(l, r) => new SplitBooleanQuery().addMust(whenTrue(l)).addMust(whenTrue(r))
    case MixedBooleanFilter.Or(l, r) => new SplitBooleanQuery().addShould(whenTrue(l)).addShould(whenTrue(r))
    case MixedBooleanFilter.Not(c) => whenFalse(c)
    case MixedBooleanFilter.IndexQueryFilter(column, query, _) => parse(query, Seq(column))
    case MixedBooleanFilter.IndexQueryAllFilter(query) => parse(query, allFields)
    case MixedBooleanFilter.Regular(filter) => exact(filter)
  }

  private def whenFalse(f: MixedBooleanFilter): SplitQuery = f match {
    case MixedBooleanFilter.And(l, r) => new SplitBooleanQuery().addShould(whenFalse(l)).addShould(whenFalse(r))
    case MixedBooleanFilter.Or(l, r) => new SplitBooleanQuery().addMust(whenFalse(l)).addMust(whenFalse(r))
    case MixedBooleanFilter.Not(c) => whenTrue(c)
    case _: MixedBooleanFilter.IndexQueryFilter | _: MixedBooleanFilter.IndexQueryAllFilter =>
      allBut(whenTrue(f))
    case MixedBooleanFilter.Regular(filter) => filter match {
      case IsNull(_) | IsNotNull(_) | EqualNullSafe(_, _) => allBut(exact(filter))
      case EqualTo(a, v) if v != null => existingBut(a, filter)
      case In(a, vs) if !vs.contains(null) => existingBut(a, filter)
      case GreaterThan(a, _) => existingBut(a, filter)
      case GreaterThanOrEqual(a, _) => existingBut(a, filter)
      case LessThan(a, _) => existingBut(a, filter)
      case LessThanOrEqual(a, _) => existingBut(a, filter)
      case StringStartsWith(a, _) => existingBut(a, filter)
      case StringEndsWith(a, _) => existingBut(a, filter)
      case StringContains(a, _) => existingBut(a, filter)
      case other => throw IndexTablesErrors.indexQueryWithInexact(other.toString)
    }
  }

  private def exact(filter: Filter): SplitQuery = regular.translate(filter) match {
    case Some(t) if t.exact => t.query
    case _ => throw IndexTablesErrors.indexQueryWithInexact(filter.toString)
  }

  private def allBut(q: SplitQuery): SplitQuery =
    new SplitBooleanQuery().addMust(new SplitMatchAllQuery()).addMustNot(q)

  private def existingBut(column: String, filter: Filter): SplitQuery = {
    val hasExists = schema.field(column).exists { f =>
      f.kind != IndexKind.Text && f.kind != IndexKind.Json && f.kind != IndexKind.Bytes
    }
    if (!hasExists) throw IndexTablesErrors.indexQueryWithInexact(s"NOT ($filter)")
    new SplitBooleanQuery().addMust(new SplitExistsQuery(column)).addMustNot(exact(filter))
  }
}

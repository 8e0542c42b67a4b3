package io.indextables.spark.filters

import org.apache.spark.sql.sources.Filter

/** Which fields an IndexQuery predicate may target, and how its query string is read. */
sealed abstract class IndexQueryMode(val operator: String) extends Serializable

object IndexQueryMode {

  /** `col indexquery 'q'`: any indexed field; the query may name other fields too. */
  case object IndexQuery extends IndexQueryMode("indexquery")

  /** `col textsearch 'q'`: tokenized (`text`) fields only. */
  case object TextSearch extends IndexQueryMode("textsearch")

  /** `col fieldmatch 'q'`: exact (not tokenized) fields only. */
  case object FieldMatch extends IndexQueryMode("fieldmatch")
}

/**
 * A boolean tree over regular Spark filters and IndexQuery predicates, for one IndexTables
 * relation. An IndexQuery predicate is two-valued: TRUE for a row whose document the query
 * matches, FALSE otherwise (also when the column is null). Regular filters keep SQL's
 * three-valued logic, and the tree is translated so that exactly the rows for which it is TRUE
 * are read (see [[MixedBooleanFilterConverter]]). Immutable; built on the driver.
 */
sealed trait MixedBooleanFilter extends Serializable {
  def and(other: MixedBooleanFilter): MixedBooleanFilter = MixedBooleanFilter.And(this, other)
}

object MixedBooleanFilter {
  final case class And(left: MixedBooleanFilter, right: MixedBooleanFilter)
      extends MixedBooleanFilter {
    override def toString: String = s"($left AND $right)"
  }

  final case class Or(left: MixedBooleanFilter, right: MixedBooleanFilter)
      extends MixedBooleanFilter {
    override def toString: String = s"($left OR $right)"
  }

  final case class Not(child: MixedBooleanFilter) extends MixedBooleanFilter {
    override def toString: String = s"NOT $child"
  }

  /** A predicate Spark can express as a V1 filter. */
  final case class Regular(filter: Filter) extends MixedBooleanFilter {
    override def toString: String = filter.toString
  }

  /** `column <mode> 'query'`: the query string searched with `column` as its default field. */
  final case class IndexQueryFilter(column: String, query: String, mode: IndexQueryMode)
      extends MixedBooleanFilter {
    override def toString: String = s"$column ${mode.operator} '$query'"
  }

  /** `indexqueryall('query')`: the query string searched over every string and text field. */
  final case class IndexQueryAllFilter(query: String) extends MixedBooleanFilter {
    override def toString: String = s"indexqueryall('$query')"
  }
}

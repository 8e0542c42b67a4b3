package io.indextables.spark.read

import org.apache.spark.sql.sources.{Filter, IsNotNull}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.IndexTablesOptions
import io.indextables.spark.filters.{FilterLogic, FiltersToQueryConverter, IndexQueryParsing}
import io.indextables.spark.transaction.AddAction
import io.indextables.tantivy4java.split.{SplitBooleanQuery, SplitQuery}

/**
 * What one scan's filters come to, decided once on the driver when Spark offers them: the
 * splits they keep, each split variant's native query, which filters the index answers exactly
 * (`pushed`) and which Spark must check again (`post`). Immutable.
 *
 * @param data         the filters on data columns (the others name partition columns only)
 * @param translations each variant's native query (query-AST JSON), and the same without token
 *                     queries on text columns, for splits holding over-long tokens
 * @param parquetReason for a companion table, why the scan has nothing for the index to do
 *                     (and may read the Parquet files instead); None when it searches
 * @param scoreQueries each variant's IndexQuery tree alone (query-AST JSON), the text clauses
 *                     a row's `_score` is computed for; None without an IndexQuery
 */
private[read] final case class FilterPushdown(
    filters: Seq[Filter],
    data: Seq[Filter],
    pushed: Seq[Filter],
    post: Seq[Filter],
    candidates: ScanCandidates,
    variants: ScanVariants,
    translations: IndexedSeq[(Option[String], Option[String])],
    parquetReason: Option[String],
    scoreQueries: IndexedSeq[Option[String]]) {

  def files: Seq[AddAction] = candidates.files
  def kept: Seq[AddAction] = candidates.kept

  /** No filter is left for Spark, and no split is read with a different query. */
  def exact(table: ScanTable): Boolean = {
    val tokensDiffer = translations.exists { case (q, noTokens) => q != noTokens }
    post.isEmpty && (!tokensDiffer || !kept.exists(table.hasLongTokens))
  }

  /** Columns a top-level pushed filter holds non-null: IsNotNull, or a comparison with them. */
  def nonNullColumns: Set[String] = data.collect {
    case IsNotNull(c) => c
    case f if FilterLogic.nullRejecting(f) => f.references.head
  }.toSet
}

private[read] object FilterPushdown {

  /**
   * Translates `filters` for `table`: partition filters prune, data filters become one native
   * query per split variant, and a filter is pushed where every variant takes it exactly.
   * Fails when Spark would have to check a filter on a column the splits index but do not
   * store (it could not: the reader has no value for it).
   */
  def of(table: ScanTable, filters: Seq[Filter]): FilterPushdown = {
    val (partitionOnly, data) = filters.partition { f =>
      f.references.nonEmpty && f.references.forall(table.partitionColumns.contains)
    }
    val candidates = table.candidates(filters)
    val variants = table.variants(candidates.kept)
    val perVariant = variants.schemas.map { case (schema, mapping) =>
      val mixed =
        table.mixedFilter.map(f => IndexQueryParsing.toQuery(f, schema, mapping, table.tablePath))
      val (q, pushedData, postData) = new FiltersToQueryConverter(schema).translateConjuncts(data)
      // The same conjuncts without token queries, for splits holding over-long tokens. The
      // IndexQuery tree stays as it is: the user's query says what to search.
      val noTokens = new FiltersToQueryConverter(schema, tokenQueries = false)
        .translateConjuncts(data)._1
      (
        withMixed(q, mixed).map(_.toQueryAstJson),
        withMixed(noTokens, mixed).map(_.toQueryAstJson),
        pushedData,
        postData,
        schema,
        mixed.map(_.toQueryAstJson))
    }
    // A filter is pushed where every variant takes it; Spark re-checks any that one does not.
    val postData = data.filter(f => perVariant.exists(_._4.contains(f)))
    val pushedData =
      if (perVariant.isEmpty) Nil else data.filter(f => perVariant.forall(_._3.contains(f)))
    perVariant.foreach { v =>
      postData.foreach { f =>
        f.references.find(c => v._5.field(c).exists(!_.stored)).foreach { c =>
          throw IndexTablesErrors.filterOnIndexOnlyColumn(f.toString, c)
        }
      }
    }
    // A partition filter is answered by pruning alone when it is TRUE for every split pruning
    // keeps (they are all of one value per split); otherwise (a form the pruner cannot compute
    // exactly) Spark re-checks it on the values the reader attaches. Data filters come back
    // unless their query was exact.
    val exactPartition = partitionOnly.filter { f =>
      candidates.kept.forall(a => table.pruner.isTrueForPartition(a.partitionValues, Seq(f)))
    }
    FilterPushdown(
      filters = filters,
      data = data,
      pushed = pushedData ++ partitionOnly,
      post = postData ++ partitionOnly.filterNot(exactPartition.contains),
      candidates = candidates,
      variants = variants,
      translations = perVariant.map(v => (v._1, v._2)),
      parquetReason = parquetReason(table, data, perVariant.map(_._3)),
      scoreQueries = perVariant.map(_._6)
    )
  }

  /** Spark's translated conjuncts and the IndexQuery tree: both must hold. */
  private def withMixed(q: Option[SplitQuery], mixedQuery: Option[SplitQuery])
      : Option[SplitQuery] = (q, mixedQuery) match {
    case (Some(a), Some(b)) => Some(new SplitBooleanQuery().addMust(a).addMust(b))
    case (a, b) => a.orElse(b)
  }

  /**
   * Why a scan of a companion table with data filters `data` has nothing for the index to do,
   * given the filters each variant's translation takes (`pushedPerVariant`): no search (an
   * IndexQuery is one), and no filter the index answers but IS NOT NULL, which selects nearly
   * every row (the Parquet route then drops the rows with NULLs itself, as the filters were
   * pushed for an aggregation the index may still answer). None when the scan searches.
   */
  private def parquetReason(
      table: ScanTable,
      data: Seq[Filter],
      pushedPerVariant: Seq[Seq[Filter]]): Option[String] = {
    val selective = pushedPerVariant.flatten.exists {
      case _: IsNotNull => false
      case _ => true
    }
    // With no candidate split, no variant says what the index takes: the index route (which
    // reads nothing) shows the pushed query as on any table.
    val indexRoute =
      table.opts.options.exists(_._1.equalsIgnoreCase(IndexTablesOptions.IndexRouteOption))
    if (!table.companion || table.mixedFilter.isDefined || selective || indexRoute) None
    else if (pushedPerVariant.isEmpty && data.nonEmpty) None
    else if (data.isEmpty) Some("no filter for the index")
    else Some("no selective filter for the index")
  }
}

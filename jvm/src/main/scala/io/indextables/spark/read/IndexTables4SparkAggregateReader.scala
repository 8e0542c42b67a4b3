package io.indextables.spark.read

import scala.collection.JavaConverters._
import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.read.PartitionReader
import org.apache.spark.sql.types.StringType
import org.apache.spark.unsafe.types.UTF8String

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.schema.{IndexKind, IndexedField, PartitionValues}
import io.indextables.tantivy4java.aggregation.{CountAggregation, CountResult, TermsResult}
import io.indextables.tantivy4java.split.{SplitBooleanQuery, SplitExistsQuery, SplitMatchAllQuery, SplitParsedQuery, SplitQuery, SplitSearcher}

/**
 * Answers a pushed [[AggregatePlan]] for one split: one partial row per group, never the
 * documents. Counts come, cheapest first, from the log (an unfiltered split's record count),
 * from a value count on a fast field plus the hits that lack a value, from the number of hits
 * of the pushed query, or, per value of a grouped `string` column, from
 * tantivy's terms aggregation on its fast field; when that aggregation cannot vouch for every
 * bucket (too many distinct values), the column's values are fetched and counted here. Runs on
 * an executor, on one thread; borrows a searcher only when the log cannot answer, and gives it
 * back.
 */
final class IndexTables4SparkAggregateReader(
    plan: ReadPlan,
    split: SplitInputPartition,
    agg: AggregatePlan)
    extends PartitionReader[InternalRow] {

  private var searcherOpt: Option[SplitSearcher] = None
  private var healthy = true
  private lazy val checked = SplitSearchEngine.check(plan, split)
  private def searcher: SplitSearcher = searcherOpt.getOrElse {
    val s = SplitSearchEngine.borrow(checked, split, plan)
    searcherOpt = Some(s)
    s
  }

  // The builder refuses aggregates when this split's query would differ (over-long tokens).
  private val queryJson: Option[String] = plan.variants(split.variant).queryAstJson
  private lazy val query: SplitQuery =
    queryJson.map(new SplitParsedQuery(_)).getOrElse(new SplitMatchAllQuery())

  // A failed native call leaves the searcher to be closed, not kept for later reads.
  private lazy val rows: Iterator[InternalRow] =
    try compute().iterator
    catch { case e: Throwable => healthy = false; throw e }
  private var current: InternalRow = _

  override def next(): Boolean = if (rows.hasNext) { current = rows.next(); true }
  else false

  override def get(): InternalRow = current

  private def compute(): Seq[InternalRow] = agg.fieldGroup match {
    case None =>
      val n = countMatches()
      if (n == 0 && agg.groupBy.nonEmpty) Nil else Seq(row(null, n))
    case Some(g) =>
      val counts = valueCounts(g.name)
      counts.toSeq.map { case (value, n) => row(value.map(UTF8String.fromString).orNull, n) }
  }

  /** Documents matching the pushed query. */
  private def countMatches(): Long = (queryJson, split.numRecords, agg.countField) match {
    case (None, Some(n), _) => n
    case (_, _, Some(f)) =>
      // Listing hits costs tantivy4java ~17 us each; a value count costs next to nothing. The
      // documents without a value are listed instead (a fast field of the table: usually few).
      val counted =
        try {
          val result = searcher.aggregate(query, "c", new CountAggregation("c", f))
          try result.getAggregation("c") match {
              case c: CountResult => c.getCount
              case other => throw new IllegalStateException(s"value_count on $f gave $other")
            }
          finally result.close()
        } catch {
          case e: Exception =>
            throw IndexTablesErrors.searchFailed(split.path, queryJson.getOrElse("match_all"), e)
        }
      val missing = new SplitBooleanQuery().addMust(query).addMustNot(new SplitExistsQuery(f))
      counted + withHits((_, docs) => docs.length.toLong, missing)
    case _ => withHits((_, docs) => docs.length.toLong)
  }

  /** Per value of the `string` column `field` (None for null), the matching documents. */
  private def valueCounts(field: String): Map[Option[String], Long] = {
    val docs = split.numRecords.getOrElse(Int.MaxValue.toLong)
    // One bucket more than the split could need (or than we accept): fewer buckets back than
    // asked means no segment cut its list short (a cut segment alone fills `size` buckets).
    // tantivy4java reports no sum_other_doc_count, so this is the only proof of completeness.
    val size = (math.min(docs, IndexTables4SparkAggregateReader.MaxBuckets) + 1).toInt
    val terms = new io.indextables.tantivy4java.aggregation.TermsAggregation("g", field, size, size)
    val result =
      try searcher.aggregate(query, "g", terms)
      catch {
        case e: Exception =>
          throw IndexTablesErrors.searchFailed(split.path, queryJson.getOrElse("match_all"), e)
      }
    val buckets =
      try result.getAggregation("g") match {
          case t: TermsResult if t.getBuckets.size < size =>
            Some(t.getBuckets.asScala.map(b => Option(b.getKeyAsString) -> b.getDocCount).toMap)
          case _ => None
        }
      finally result.close()
    buckets match {
      case Some(b) =>
        val nulls = countMatches() - b.values.sum
        if (nulls < 0) throw new IllegalStateException(
          s"terms aggregation on $field in ${split.path} counted more documents than match")
        if (nulls > 0) b + (None -> nulls) else b
      case None => fetchAndCount(field)
    }
  }

  /** The exact per-value counts from the stored values, when the aggregation was cut short. */
  private def fetchAndCount(field: String): Map[Option[String], Long] =
    withHits { (segments, docs) =>
      val counts = mutable.HashMap.empty[Option[String], Long]
      val decoder =
        new ProjectedDocDecoder(Seq((IndexedField(field, StringType, IndexKind.RawString), 0)))
      docs.indices.grouped(plan.batchSize).foreach { batch =>
        val (from, until) = (batch.head, batch.last + 1)
        val bytes =
          try NativeDocs.projected(
              searcher,
              segments.slice(from, until),
              docs.slice(from, until),
              Array(field))
          catch { case e: Exception => throw IndexTablesErrors.splitReadFailed(split.path, e) }
        decoder.decode(bytes, () => new GenericInternalRow(1)).foreach { r =>
          val v = if (r.isNullAt(0)) None else Some(r.getUTF8String(0).toString)
          counts(v) = counts.getOrElse(v, 0L) + 1
        }
      }
      counts.toMap
    }

  /** Runs the pushed query for every match and hands `f` the hits' (segment, doc) numbers. */
  private def withHits[T](f: (Array[Int], Array[Int]) => T, q: SplitQuery = query): T = {
    val limit = split.numRecords.getOrElse(Int.MaxValue.toLong).min(Int.MaxValue).toInt
    if (limit <= 0) return f(Array.empty, Array.empty)
    if (queryJson.isEmpty && (q eq query))
      SplitSearchEngine.singleSegmentDocs(checked, split).foreach { n =>
        return f(new Array[Int](n.toInt), Array.tabulate(n.toInt)(identity))
      }
    val result =
      try searcher.search(q, limit)
      catch {
        case e: Exception => throw IndexTablesErrors.searchFailed(split.path, q.toQueryAstJson, e)
      }
    val (segments, docs) =
      try NativeDocs.hitIds(result)
      finally result.close()
    f(segments, docs)
  }

  /** A partial row: the split's partition values, `fieldValue` for a grouped data column. */
  private def row(fieldValue: Any, count: Long): InternalRow = {
    val values = agg.groupBy.map { g =>
      if (g.isPartition) {
        PartitionValues.decode(
          split.partitionValues.getOrElse(g.name, null),
          g.dataType,
          plan.timeZone)
      } else fieldValue
    } ++ Seq.fill(agg.counts)(count)
    new GenericInternalRow(values.toArray[Any])
  }

  override def close(): Unit = searcherOpt.foreach { s =>
    if (healthy) SplitSearchEngine.giveBack(checked, split, plan, s) else s.close()
  }
}

object IndexTables4SparkAggregateReader {

  /** Buckets asked of one terms aggregation; tantivy refuses more than 65,000. */
  val MaxBuckets: Long = 10000L
}

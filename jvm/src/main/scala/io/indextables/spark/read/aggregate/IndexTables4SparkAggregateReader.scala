package io.indextables.spark.read.aggregate

import java.time.Instant

import scala.jdk.CollectionConverters._
import scala.util.Try

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.read.PartitionReader
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.roaringbitmap.RoaringBitmap

import io.indextables.spark.expressions.{DateHistogramBucket, HistogramBucket, RangeBucket}
import io.indextables.spark.read.{DeletionVectors, LeafCacheBypass, NativeDocs, ProjectedDocDecoder, ReadPlan, SplitInputPartition, SplitSearchEngine}
import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.IndexTablesConf
import io.indextables.spark.read.aggregate.PushedMetric._
import io.indextables.spark.schema.PartitionValues
import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.metrics.ScanTaskCounters
import io.indextables.spark.schema.{IndexKind, IndexedField, IntegerTypes}
import io.indextables.spark.storage.{SplitFileGate, StorageConf}
import io.indextables.tantivy4java.aggregation.{AggregationResult, CountAggregation, CountResult, DateHistogramAggregation, DateHistogramResult, HistogramAggregation, HistogramResult, RangeAggregation, RangeResult, StatsAggregation, StatsResult, TermsAggregation, TermsResult}
import io.indextables.tantivy4java.split.{SplitAggregation, SplitBooleanQuery, SplitExistsQuery, SplitMatchAllQuery, SplitParsedQuery, SplitQuery, SplitSearcher}

/**
 * Answers a pushed [[AggregatePlan]] for one split: one partial row per group, never the
 * documents. One tantivy aggregation call computes every metric (a stats aggregation per column
 * summed, compared or counted) inside nested terms aggregations, one per grouped data column.
 * COUNT(*) without groups comes, cheapest first, from the log (an unfiltered split's record
 * count), from a value count on a fast field plus the hits that lack a value, or from the hits.
 *
 * Exactness: a terms aggregation is asked for one bucket more than the split could need (or
 * than we accept); fewer back proves no bucket was cut. Documents lacking a grouped value (SQL
 * NULL keys) land, in the same call, in the bucket of tantivy's `missing` key [[NullKey]], on
 * every terms level where that key cannot be a value: integer and date columns (whose keys are
 * numbers and instants), and string columns whose log minimum in this split is above it. For
 * any other group (booleans, bucket functions, strings without that proof) whose column the
 * filters do not hold non-null, NULL keys are found by the same aggregation over `query AND NOT
 * exists(column)`, for each combination of such keys, when the buckets do not hold every
 * match. When a list was cut, a floating column holds NaN (which
 * tantivy's min/max skip and Spark orders last), or a value does not convert exactly, the split
 * fetches the columns of its matching rows and aggregates them itself ([[PartialAggregator]]).
 * A split with a deletion vector counts its surviving hits, or its record count less the
 * deleted docs; its other aggregations are tantivy's over all its docs less its deleted docs'
 * partials, when its every doc matches and that is exact ([[lessDeleted]]), else it aggregates
 * its surviving rows (tantivy's aggregations would count its deleted docs). Runs on an
 * executor, on one thread; borrows a searcher only when the log cannot answer, and
 * gives it back.
 */
final class IndexTables4SparkAggregateReader(
    plan: ReadPlan,
    split: SplitInputPartition,
    agg: AggregatePlan,
    counters: ScanTaskCounters)
    extends PartitionReader[InternalRow] {
  import IndexTables4SparkAggregateReader._

  private var searcherOpt: Option[SplitSearcher] = None
  private var healthy = true
  // From the split's local copy to the searcher's return: FLUSH DISK CACHE waits for it.
  private val use = SplitFileGate.enter()
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

  // The split's deleted docs: none of them is counted or aggregated, except by lessDeleted,
  // which passes None as the docs to leave out (`gone`) to take every doc.
  private lazy val deleted = DeletionVectors.of(plan, split)

  private val groups = agg.dataGroups
  // The groups whose NULL keys tantivy buckets under NullKey (see the class comment).
  private val keyedNulls: Set[Int] = groups.indices.filter { i =>
    val g = groups(i)
    g.bucket.isEmpty && agg.fetchFields.find(_.name == g.name).exists { f =>
      f.kind match {
        case IndexKind.I64 | IndexKind.DateTime => true
        case IndexKind.RawString =>
          split.keyMins.get(g.name).exists(m => m.nonEmpty && m.charAt(0) > NullKey.charAt(0))
        case _ => false // tantivy refuses a string `missing` on a boolean column
      }
    }
  }.toSet
  // The groups whose NULL keys take searches of their own.
  private val nullable = groups.indices.filterNot { i =>
    keyedNulls(i) || agg.nonNullColumns.contains(groups(i).name)
  }
  private val stats = agg.statsColumns
  private val counted = agg.countedColumns
  // One bucket more than the split could need (or than we accept).
  private val size = (math.min(split.numRecords.getOrElse(Int.MaxValue.toLong), MaxBuckets) + 1)
    .toInt

  // A failed native call leaves the searcher to be closed, not kept for later reads.
  private lazy val rows: Iterator[InternalRow] =
    try {
      val computed = compute()
      counters.splitsSearched += 1
      computed.iterator
    } catch { case e: Throwable => healthy = false; throw e }
  private var current: InternalRow = _

  override def next(): Boolean =
    if (rows.hasNext) { current = rows.next(); counters.rowsReturned += 1; true }
    else false

  override def get(): InternalRow = current

  /** One group's data-column keys (None for NULL), its document count and its partials. */
  private type Partial = (Seq[Any], Array[Any])

  private def compute(): Seq[InternalRow] = {
    val partials: Seq[Partial] =
      if (groups.isEmpty && agg.metrics.forall(_ == CountAll)) {
        val n = countMatches(query, deleted)
        if (n == 0 && agg.groupBy.nonEmpty) Nil
        else Seq((Nil, Array.fill[Any](agg.metrics.size)(n)))
      } else if (deleted.isDefined) lessDeleted().getOrElse(fromRows())
      else native().getOrElse(fromRows())
    partials.map { case (keys, values) => row(keys, values) }
  }

  /** The partials from tantivy's aggregations, or None when they are not exact. */
  private def native(): Option[Seq[Partial]] =
    nativeGroups(agg.needsDocCount || agg.groupBy.nonEmpty, deleted).map(_.map(p => (p._1, p._3)))

  /**
   * Each group's keys, document count (-1 unless `docs` or grouped) and partials, from
   * tantivy's aggregations; None when they are not exact. Document counts leave out the docs
   * `gone` (tantivy's metrics take every doc: see [[lessDeleted]]).
   */
  private def nativeGroups(docs: Boolean, gone: Option[RoaringBitmap])
      : Option[Seq[(Seq[Any], Long, Array[Any])]] =
    if (groups.isEmpty) {
      val n = if (docs || agg.groupBy.nonEmpty) countMatches(query, gone) else -1L
      if (n == 0 && agg.groupBy.nonEmpty) Some(Nil)
      else metricsOf(runAggregation(query, metricAggregations), n).map(v => Seq((Nil, n, v)))
    } else {
      bucketed(query, groups.indices, gone).flatMap { all =>
        lazy val inBuckets = all.map(_._2).sum
        if (nullable.isEmpty || countMatches(query, gone) == inBuckets) Some(all)
        else {
          // Some matches lack a grouped value: one search per combination of NULL keys.
          val nullGroups = (1 to nullable.size).flatMap(nullable.combinations).map { absent =>
            val q = absent.foldLeft(new SplitBooleanQuery().addMust(query)) { (b, i) =>
              b.addMustNot(new SplitExistsQuery(groups(i).name))
            }
            bucketed(q, groups.indices.filterNot(absent.contains), gone)
          }
          if (nullGroups.exists(_.isEmpty)) None
          else Some(all ++ nullGroups.flatten.flatten)
        }
      }
    }

  /**
   * The groups of the matches of `q` that have a value in each of the data groups `present`
   * (the others are NULL): keys in the order of [[AggregatePlan.dataGroups]], document count,
   * partials. None when a terms list may have been cut or a value is not exact. A group of no
   * bucket (every group NULL) counts its matches less the docs `gone`.
   */
  private def bucketed(
      q: SplitQuery,
      present: Seq[Int],
      gone: Option[RoaringBitmap]): Option[Seq[(Seq[Any], Long, Array[Any])]] =
    if (present.isEmpty) {
      val n = countMatches(q, gone)
      if (n == 0) Some(Nil)
      else {
        val keys = Seq.fill[Any](groups.size)(null)
        metricsOf(runAggregation(q, metricAggregations), n).map(v => Seq((keys, n, v)))
      }
    } else {
      // A range aggregation holds no sub-aggregation: it goes innermost (there is one at most).
      val nested = present.sortBy(i => groups(i).bucket.exists(_.isInstanceOf[RangeBucket]))
      val outer = nested.zipWithIndex.reverse.foldLeft(Option.empty[SplitAggregation]) {
        case (inner, (g, depth)) =>
          val subs = inner.map(i => Map(i.getName -> i)).getOrElse(metricAggregations)
          Some(bucketAggregation(s"g$depth", groups(g), keyedNulls(g), subs))
      }.get
      // A floating column bucketed holds no NaN or infinity (tantivy's buckets would differ),
      // checked by stats aggregations in the same call.
      val checks = present.map(groups).filter(g => g.bucket.isDefined && isFloating(g))
        .map(_.name).distinct.map(c =>
          s"f_$c" -> (new StatsAggregation(s"f_$c", c): SplitAggregation))
      val results =
        try runAggregation(q, Map(outer.getName -> outer) ++ checks)
        catch {
          // A bucket aggregation tantivy refuses (too many buckets): the rows answer instead.
          case _: IndexTablesException if groups.exists(_.bucket.isDefined) => return None
        }
      val finite = checks.forall { case (n, _) =>
        results(n) match {
          case st: StatsResult => st.getCount == 0 || (!st.getSum.isNaN && !st.getSum.isInfinite)
          case _ => false
        }
      }
      def walk(r: AggregationResult, depth: Int, keys: Map[Int, Any])
          : Option[Seq[(Seq[Any], Long, Array[Any])]] =
        bucketsOf(groups(nested(depth)), keyedNulls(nested(depth)), r).flatMap { buckets =>
          val out = buckets.filter(_._2 > 0).map { case (key, docs, sub) =>
            key.flatMap { k =>
              val ks = keys + (nested(depth) -> k)
              if (depth == nested.size - 1)
                metricsOf(sub, docs).map { v =>
                  Seq((groups.indices.map(i => ks.getOrElse(i, null)), docs, v))
                }
              else walk(sub(s"g${depth + 1}"), depth + 1, ks)
            }
          }
          if (out.exists(_.isEmpty)) None else Some(out.flatten.flatten)
        }
      if (!finite) None else walk(results("g0"), 0, Map.empty)
    }

  private def isFloating(g: GroupColumn): Boolean =
    agg.fetchFields.find(_.name == g.name).exists(f => f.kind == IndexKind.F64)

  /**
   * The aggregation that buckets `g`'s values, with `subs` under each bucket; documents without
   * a value go to the bucket of [[NullKey]] when `keyNulls`.
   */
  private def bucketAggregation(
      name: String,
      g: GroupColumn,
      keyNulls: Boolean,
      subs: Map[String, SplitAggregation]): SplitAggregation = g.bucket match {
    case None =>
      val t =
        if (keyNulls) new TermsWithMissing(name, g.name, size, NullKey)
        else new TermsAggregation(name, g.name, size, size)
      subs.foreach { case (n, a) => t.addSubAggregation(n, a) }
      t
    case Some(HistogramBucket(interval, offset)) =>
      val h = new HistogramAggregation(name, g.name, interval).setMinDocCount(1L)
      if (offset != 0.0) h.setOffset(offset)
      subs.values.foreach(h.addSubAggregation)
      h
    case Some(DateHistogramBucket(interval, offset)) =>
      val d = new DateHistogramAggregation(name, g.name)
        .setFixedInterval(s"${interval / 1000}ms").setMinDocCount(1L)
      if (offset != 0L) d.setOffset(s"${offset / 1000}ms")
      subs.values.foreach(d.addSubAggregation)
      d
    case Some(RangeBucket(ranges)) =>
      val r = new RangeAggregation(name, g.name)
      ranges.foreach { x =>
        r.addRange(x.name, x.from.map(Double.box).orNull, x.to.map(Double.box).orNull)
      }
      // tantivy4java 0.31.0 nests nothing under a range aggregation: the plan pushes one only
      // innermost, under COUNT(*) alone (AggregatePlan.of).
      if (subs.nonEmpty)
        throw IndexTablesErrors.internalError(
          s"a range aggregation of ${g.name} was planned with sub-aggregations")
      r
  }

  /**
   * The buckets of one level of the nested aggregation: each one's key as Spark's value (None
   * when it does not convert exactly), its document count and its sub-aggregations. None when
   * the list may have been cut (a terms list as long as asked for).
   */
  private def bucketsOf(g: GroupColumn, keyedNulls: Boolean, r: AggregationResult)
      : Option[Seq[(Option[Any], Long, String => AggregationResult)]] = (g.bucket, r) match {
    case (None, t: TermsResult) if t.getBuckets.size < size =>
      Some(t.getBuckets.asScala.toSeq.map { b =>
        (
          if (keyedNulls && b.getKeyAsString == NullKey) Some(null)
          else keyOf(g.dataType, b.getKeyAsString),
          b.getDocCount,
          (n: String) => b.getSubAggregations.get(n))
      })
    case (Some(_: HistogramBucket), h: HistogramResult) =>
      Some(h.getBuckets.asScala.toSeq.map { b =>
        (Some(b.getKey), b.getDocCount, (n: String) => b.getSubAggregations.get(n))
      })
    case (Some(_: DateHistogramBucket), d: DateHistogramResult) =>
      Some(d.getBuckets.asScala.toSeq.map { b =>
        // Keys are milliseconds since the epoch.
        val micros = b.getKey * 1000.0
        val key =
          if (micros.isWhole && math.abs(micros) <= MaxExactDouble) Some(micros.toLong) else None
        (key, b.getDocCount, (n: String) => b.getSubAggregations.get(n))
      })
    case (Some(RangeBucket(ranges)), rr: RangeResult) =>
      // tantivy adds buckets for the gaps between the ranges: their values are in no range,
      // and Spark's key for them is NULL.
      Some(rr.getBuckets.asScala.toSeq.map { b =>
        val named = ranges.find { x =>
          x.name == b.getKey && x.from.map(Double.box) == Option(
            b.getFrom).filterNot(_.isInfinite) &&
          x.to.map(Double.box) == Option(b.getTo).filterNot(_.isInfinite)
        }
        (
          Some(named.map(x => UTF8String.fromString(x.name)).orNull),
          b.getDocCount,
          (n: String) => b.getSubAggregations.get(n))
      })
    case _ => None
  }

  /** Every metric's aggregation: a stats aggregation per column, a value count per counted. */
  private lazy val metricAggregations: Map[String, SplitAggregation] =
    stats.zipWithIndex.map { case (c, i) =>
      s"s$i" -> (new StatsAggregation(s"s$i", c): SplitAggregation)
    }
      .toMap ++ counted.zipWithIndex.map { case (c, i) =>
      s"c$i" -> (new CountAggregation(s"c$i", c): SplitAggregation)
    }

  /** The aggregations' results by name (read before the native result is closed). */
  private def runAggregation(q: SplitQuery, aggs: Map[String, SplitAggregation])
      : Map[String, AggregationResult] =
    if (aggs.isEmpty) Map.empty
    else {
      val (sent, original) = LeafCacheBypass.names(plan, aggs)
      val result =
        try counters.timed(searcher.aggregate(q, sent.asJava))
        catch {
          case e: Exception => throw IndexTablesErrors.searchFailed(split.path, q.toQueryAstJson, e)
        }
      // Each getAggregation converts the whole native result again: one call converts all.
      val results =
        try
          if (sent.size == 1) sent.keys.map(n => n -> result.getAggregation(n))
          else result.getAggregations.asScala
        finally result.close()
      results.map { case (n, r) => original(n) -> r }.toMap.withDefaultValue(null)
    }

  /** The partial of each metric from the named results, or None if one is not exact. */
  private def metricsOf(result: String => AggregationResult, docs: Long): Option[Array[Any]] = {
    def statsOf(c: String): StatsResult = result(s"s${stats.indexOf(c)}") match {
      case s: StatsResult => s
      case other =>
        throw IndexTablesErrors.nativeDataUnexpected(s"stats of $c in ${split.path} gave $other")
    }
    val out = agg.metrics.map {
      case CountAll => Some(docs)
      case CountOf(c) if stats.contains(c) => Some(statsOf(c).getCount)
      case CountOf(c) => result(s"c${counted.indexOf(c)}") match {
          case r: CountResult => Some(r.getCount)
          case other => throw IndexTablesErrors.nativeDataUnexpected(s"count of $c gave $other")
        }
      case SumOf(c, t) =>
        val s = statsOf(c)
        if (s.getCount == 0) Some(null)
        else if (PushedMetric.isIntegral(t)) exactLong(s.getSum)
        else Some(s.getSum)
      case MinOf(c, t) => bound(statsOf(c), t, _.getMin)
      case MaxOf(c, t) => bound(statsOf(c), t, _.getMax)
    }
    if (out.exists(_.isEmpty)) None else Some(out.map(_.orNull).toArray)
  }

  /** MIN or MAX as Spark's value; None when NaN may hide in it (tantivy skips NaN). */
  private def bound(s: StatsResult, t: DataType, get: StatsResult => Double): Option[Any] =
    if (s.getCount == 0) Some(null)
    else if (s.getSum.isNaN) None
    else {
      val d = get(s)
      t match {
        case t if IntegerTypes.contains(t) =>
          exactLong(d).flatMap(l => IntegerTypes.narrow(t, l.asInstanceOf[Long]))
        case DoubleType => Some(d)
        case FloatType => Some(d.toFloat)
        case DateType =>
          // Dates are held as nanoseconds since the epoch, at midnight UTC.
          if (d % NanosPerDay == 0) Some((d / NanosPerDay).toInt) else None
        case TimestampType =>
          // Nanoseconds since the epoch; pushed only over whole seconds, which a double holds
          // exactly (to the year 2116); anything else aggregates the split's rows instead.
          if (d % NanosPerSecond == 0 && math.abs(d / NanosPerSecond) < MaxExactSeconds)
            Some((d / NanosPerSecond).toLong * 1000000L)
          else None
        case _ => None
      }
    }

  private def exactLong(d: Double): Option[Any] =
    if (d.isWhole && math.abs(d) <= MaxExactDouble) Some(d.toLong) else None

  /** Documents matching `q`, less the docs `gone` (the deleted ones, or None). */
  private def countMatches(q: SplitQuery, gone: Option[RoaringBitmap]): Long =
    (q eq query, queryJson, split.numRecords) match {
      case (true, None, Some(n)) => n - gone.fold(0L)(_.getLongCardinality)
      case _ if gone.isDefined => withHits((_, docs) => docs.length.toLong, q, gone)
      case _ =>
        agg.countField match {
          case Some(f) =>
            // Listing hits costs tantivy4java ~17 us each; a value count costs next to nothing. The
            // documents without a value are listed instead (usually few).
            val r = runAggregation(q, Map("n" -> new CountAggregation("n", f)))("n") match {
              case c: CountResult => c.getCount
              case other =>
                throw IndexTablesErrors.nativeDataUnexpected(s"value_count on $f gave $other")
            }
            // A column the filters hold non-null has a value in every match of the split's query.
            if ((q eq query) && agg.nonNullColumns.contains(f)) r
            else {
              val missing = new SplitBooleanQuery().addMust(q).addMustNot(new SplitExistsQuery(f))
              r + withHits((_, docs) => docs.length.toLong, missing, None)
            }
          case None => withHits((_, docs) => docs.length.toLong, q, None)
        }
    }

  /** The partials computed here from the matching rows' stored values. */
  private def fromRows(): Seq[Partial] = {
    val acc = new PartialAggregator(agg.metrics)
    withHits(aggregateDocs(acc, agg.metrics, _, _), query, deleted)
    // Without groups Spark expects one row, even of no matches: COUNT 0, the others NULL.
    if (acc.result.isEmpty && agg.groupBy.isEmpty) Seq((Nil, PartialAggregator.empty(agg.metrics)))
    else acc.result
  }

  /** Folds the docs `(segments, docs)` into `acc`, of `metrics`, from their stored values. */
  private def aggregateDocs(
      acc: PartialAggregator,
      metrics: Seq[PushedMetric],
      segments: Array[Int],
      docs: Array[Int]): Unit = {
    val fields = agg.fetchFields
    val add = adder(acc, metrics)
    fetchDocs(fields, segments, docs)(r => add(i => r.get(i, fields(i).dataType)))
  }

  /**
   * Adds one row to `acc`, of `metrics`, given its value of each of [[AggregatePlan.fetchFields]]
   * by index.
   */
  private def adder(acc: PartialAggregator, metrics: Seq[PushedMetric]): (Int => Any) => Unit = {
    val names = agg.fetchFields.map(_.name)
    val groupAt = groups.map(g => names.indexOf(g.name))
    val metricAt = metrics.map(_.column.map(c => names.indexOf(c)).getOrElse(-1))
    value =>
      acc.add(
        groupAt.zip(groups).map { case (i, g) =>
          val v = value(i)
          if (v == null) null else g.keyOf(v)
        },
        m => value(metricAt(m)))
  }

  /** Hands `f` a row of the stored `fields` of each doc `(segments, docs)`, in their order. */
  private def fetchDocs(fields: Seq[IndexedField], segments: Array[Int], docs: Array[Int])(
      f: InternalRow => Unit): Unit = {
    val names = fields.map(_.name).toArray
    val decoder = new ProjectedDocDecoder(fields.zipWithIndex)
    docs.indices.grouped(plan.batchSize).foreach { batch =>
      val (from, until) = (batch.head, batch.last + 1)
      val bytes =
        try NativeDocs.projected(
            searcher,
            segments.slice(from, until),
            docs.slice(from, until),
            names,
            split.companion)
        catch { case e: Exception => throw IndexTablesErrors.splitReadFailed(split.path, e) }
      decoder.decode(bytes, () => new GenericInternalRow(names.length)).foreach(f)
    }
  }

  /**
   * The values of [[AggregatePlan.fetchFields]] of the deleted docs `docs` (the vector's, in
   * order), one array per field: the columns [[DeletedDocValues]] holds for this split and
   * vector from there, the others fetched (only they: a doc's fetch costs more the more columns
   * it returns) and kept there, within `cache.deletedValues.maxSize`.
   */
  private def deletedValues(docs: Array[Int]): Array[Array[Any]] = {
    val fields = agg.fetchFields
    val keys =
      fields.map(DeletedDocValues.Key(plan.tablePath, split.path, split.deletionVector.get, _))
    val cached = keys.map(DeletedDocValues.get(_).map(_.values))
    val missing = fields.indices.filter(cached(_).isEmpty)
    DeletedValuesHits.addAndGet(fields.size - missing.size)
    if (missing.isEmpty) cached.map(_.get).toArray
    else {
      val fetched = missing.map(_ => new Array[Any](docs.length))
      var d = 0
      fetchDocs(missing.map(fields), new Array[Int](docs.length), docs) { r =>
        missing.indices.foreach { i =>
          // A fetched string points into its batch's buffer: copied, it keeps only itself.
          fetched(i)(d) = r.get(i, fields(missing(i)).dataType) match {
            case s: UTF8String => s.copy()
            case v => v
          }
        }
        d += 1
      }
      if (d != docs.length)
        throw IndexTablesErrors.nativeDataUnexpected(
          s"${docs.length} deleted docs of ${split.path} fetched as $d")
      val maxBytes = deletedValuesMaxBytes
      if (maxBytes > 0) missing.indices.foreach { i =>
        DeletedDocValues.put(keys(missing(i)), new DeletedDocValues.Values(fetched(i)), maxBytes)
      }
      fields.indices.map(i => cached(i).getOrElse(fetched(missing.indexOf(i)))).toArray
    }
  }

  /** `cache.deletedValues.maxSize`, as the driver put it in the Hadoop configuration. */
  private def deletedValuesMaxBytes: Long =
    StorageConf(plan.hadoopConf.value).get(IndexTablesConf.DeletedValuesCacheMaxSize)

  /**
   * For a split with a deletion vector whose every doc matches (no query of its own): tantivy's
   * partials of all its docs less the partials of its deleted docs, whose values are fetched by
   * number (a few, next to the split). None when the difference is not exact: a group's MIN or
   * MAX may be a deleted doc's value, a floating SUM would not be the sum of the rest, an
   * integral SUM left at 0 may be no value at all, or a group of deleted docs is not among
   * tantivy's. A split with a query of its own is not answered so: finding which deleted docs
   * match would list every hit, which costs as much as aggregating the rows.
   */
  private def lessDeleted(): Option[Seq[Partial]] =
    if (queryJson.isDefined) None
    else {
      nativeGroups(docs = true, gone = None).flatMap { a =>
        val gone = new PartialAggregator(agg.metrics :+ CountAll)
        val docs = deleted.get.toArray
        val values = deletedValues(docs)
        val add = adder(gone, agg.metrics :+ CountAll)
        docs.indices.foreach(d => add(i => values(i)(d)))
        val removed = gone.result.map { case (k, v) => (k, v.last.asInstanceOf[Long], v.init) }
        val out = subtract(a, removed)
        if (out.isDefined) LessDeletedAnswers.incrementAndGet()
        out
      }
    }

  /** `all` less `removed`, group by group (see [[lessDeleted]]); None when not exact. */
  private def subtract(
      all: Seq[(Seq[Any], Long, Array[Any])],
      removed: Seq[(Seq[Any], Long, Array[Any])]): Option[Seq[Partial]] = {
    // Keys compared as the partial rows hold them (tantivy's keys and fetched values alike).
    def key(k: Seq[Any]): Seq[Any] = row(k, Array.empty[Any]).toSeq(groupSchema)
    val byKey = removed.map(r => key(r._1) -> r).toMap
    val matched = all.map(a => a -> byKey.get(key(a._1)))
    if (byKey.size != removed.size || matched.count(_._2.isDefined) != removed.size) return None
    val out = matched.map {
      case ((k, _, values), None) => Some(Some((k, values)))
      case ((k, docs, values), Some((_, gone, goneValues))) =>
        val left = docs - gone
        if (left < 0) None
        else if (left == 0)
          Some(if (agg.groupBy.isEmpty) Some((k, PartialAggregator.empty(agg.metrics))) else None)
        else {
          val v = agg.metrics.indices.map(i => less(agg.metrics(i), values(i), goneValues(i)))
          if (v.exists(_.isEmpty)) None else Some(Some((k, v.map(_.orNull).toArray[Any])))
        }
    }
    if (out.exists(_.isEmpty)) None else Some(out.flatten.flatten)
  }

  private lazy val groupSchema: Seq[DataType] = agg.groupBy.map(_.dataType)

  /** A partial of metric `m` less the partial `gone` of some of its rows, when exact. */
  private def less(m: PushedMetric, all: Any, gone: Any): Option[Any] =
    if (gone == null) Some(all)
    else m match {
      case CountAll | CountOf(_) => Some(all.asInstanceOf[Long] - gone.asInstanceOf[Long])
      case SumOf(_, t) if PushedMetric.isIntegral(t) && all != null =>
        Some(all.asInstanceOf[Long] - gone.asInstanceOf[Long]).filter(_ != 0L)
      case MinOf(_, t) if all != null && PartialAggregator.compare(t, gone, all) > 0 => Some(all)
      case MaxOf(_, t) if all != null && PartialAggregator.compare(t, gone, all) < 0 => Some(all)
      case _ => None
    }

  /**
   * Runs `q` for every match and hands `f` the hits' (segment, doc) numbers, less the docs
   * `gone` (the split's deleted docs, or None).
   */
  private def withHits[T](
      f: (Array[Int], Array[Int]) => T,
      q: SplitQuery,
      gone: Option[RoaringBitmap]): T = {
    val limit = split.numRecords.getOrElse(Int.MaxValue.toLong).min(Int.MaxValue).toInt
    if (limit <= 0) return f(Array.empty, Array.empty)
    if (queryJson.isEmpty && (q eq query))
      SplitSearchEngine.singleSegmentDocs(checked, split).foreach { n =>
        val ids = gone.fold(Array.tabulate(n.toInt)(identity))(
          DeletionVectors.survivingOf(n, _, limit))
        return f(new Array[Int](ids.length), ids)
      }
    val result =
      try counters.timed(searcher.search(LeafCacheBypass.query(plan, q), limit))
      catch {
        case e: Exception => throw IndexTablesErrors.searchFailed(split.path, q.toQueryAstJson, e)
      }
    val (segments, docs) =
      try NativeDocs.hitIds(result)
      finally result.close()
    gone match {
      case Some(d) => (f.tupled)(DeletionVectors.surviving(split, d, segments, docs, limit))
      case None => f(segments, docs)
    }
  }

  /** A partial row: group values in Spark's order (partition values from the split), partials. */
  private def row(dataKeys: Seq[Any], values: Array[Any]): InternalRow = {
    val keys = dataKeys.iterator
    val out = agg.groupBy.map { g =>
      if (g.isPartition)
        PartitionValues.decode(
          split.partitionValues.getOrElse(g.name, null),
          g.dataType,
          plan.timeZone)
      else keys.next()
    } ++ values
    new GenericInternalRow(out.toArray[Any])
  }

  override def close(): Unit =
    try searcherOpt.foreach { s =>
        if (healthy) SplitSearchEngine.giveBack(checked, split, plan, s) else s.close()
      }
    finally {
      use.end()
      counters.settle()
    }
}

object IndexTables4SparkAggregateReader {

  /**
   * How many splits with deleted rows answered a pushed aggregation from tantivy's partials less
   * their deleted docs' (in this JVM): for tests and diagnostics.
   */
  private[spark] val LessDeletedAnswers = new java.util.concurrent.atomic.AtomicLong()

  /**
   * How many columns of their deleted docs' values splits with deleted rows took from
   * [[DeletedDocValues]] instead of fetching them (in this JVM): for tests and diagnostics.
   */
  private[spark] val DeletedValuesHits = new java.util.concurrent.atomic.AtomicLong()

  /** The key under which tantivy buckets documents without a value (`missing`): NUL. */
  val NullKey: String = "\u0000"

  /** Buckets asked of one terms aggregation; tantivy refuses more than 65,000. */
  val MaxBuckets: Long = 10000L

  /** Integers up to this magnitude are exact as doubles. */
  val MaxExactDouble: Double = 9007199254740992.0 // 2^53

  private val NanosPerDay = 86400.0 * 1e9
  private val NanosPerSecond = 1e9

  /** Whole seconds below this magnitude are exact as doubles of nanoseconds (s * 5^9 < 2^53). */
  private val MaxExactSeconds = 4.6e9

  /** A terms bucket's key as Spark's value of `dt`, or None if it does not convert exactly. */
  def keyOf(dt: DataType, key: String): Option[Any] =
    if (key == null) None
    else
      Try[Any] {
        dt match {
          case StringType => UTF8String.fromString(key)
          case t if IntegerTypes.contains(t) =>
            val n = new java.math.BigDecimal(key).longValueExact()
            IntegerTypes.narrow(t, n).getOrElse(throw new ArithmeticException(s"$n is no $t"))
          case BooleanType => key match {
              case "1" | "true" => true
              case "0" | "false" => false
            }
          case DateType =>
            val instant = Instant.parse(key)
            val seconds = instant.getEpochSecond
            // A key that is not midnight UTC is no date: None, as any key that does not parse.
            if (seconds % 86400 != 0 || instant.getNano != 0)
              throw new java.time.DateTimeException(s"not a whole day: $key")
            (seconds / 86400).toInt
        }
      }.toOption
}

/**
 * A terms aggregation that buckets the documents without a value under `missingKey` (tantivy's
 * `missing`, which tantivy4java 0.31.0's builder does not offer; its native side reads the JSON).
 */
private[spark] final class TermsWithMissing(
    name: String,
    field: String,
    size: Int,
    missingKey: String)
    extends TermsAggregation(name, field, size, size) {
  override def toAggregationJson(): String = {
    val json = TermsWithMissing.mapper
    val terms = json.createObjectNode()
    terms.put("field", field).put("size", size).put("shard_size", size).put("missing", missingKey)
    val out = json.createObjectNode()
    out.set[JsonNode]("terms", terms)
    if (hasSubAggregations) {
      val aggs = out.putObject("aggs")
      getSubAggregations.asScala.foreach { case (n, a) =>
        aggs.set[JsonNode](n, json.readTree(a.toAggregationJson()))
      }
    }
    json.writeValueAsString(out)
  }
}

private object TermsWithMissing {
  // Built once: the native search asks each aggregation for its JSON on every call.
  private val mapper = new ObjectMapper()
}

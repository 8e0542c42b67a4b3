package io.indextables.spark.read.aggregate

import org.apache.spark.sql.connector.expressions.{NamedReference, UserDefinedScalarFunc}
import org.apache.spark.sql.connector.expressions.aggregate.{AggregateFunc, Aggregation, Count, CountStar, Max, Min, Sum}
import org.apache.spark.sql.types._

import io.indextables.spark.expressions.{Bucket, DateHistogramBucket, HistogramBucket, RangeBucket}
import io.indextables.spark.schema.{IndexKind, IndexedField, IntegerTypes, TableIndexSchema}

/**
 * One GROUP BY key of a pushed aggregation: a partition column (one value per split), a data
 * column whose values tantivy's terms aggregation buckets on its fast field, or a bucket
 * function of a data column (`bucket`), which tantivy's histogram, date_histogram or range
 * aggregation answers with the same keys.
 *
 * @param name     the column
 * @param dataType the key's type (the bucket's result type for a bucket function)
 */
final case class GroupColumn(
    name: String,
    dataType: DataType,
    isPartition: Boolean,
    bucket: Option[Bucket] = None) {
  def describe: String = bucket.fold(name)(_.describe(name))

  /** The key of a non-null value of the column. */
  def keyOf(v: Any): Any = bucket.fold(v)(_.keyOf(v))
}

/**
 * One aggregate function a split answers with a partial value that Spark merges: COUNT(*) and
 * COUNT(col) partials are summed, SUM partials summed, MIN/MAX partials min'd/max'd. AVG reaches
 * us as SUM and COUNT (Spark splits it when the source does not aggregate completely).
 */
sealed trait PushedMetric extends Serializable {

  /** The column it reads; None for COUNT(*). */
  def column: Option[String]

  /** The type of the partial value, as Spark expects it for this function. */
  def outputType: DataType

  def describe: String
}

object PushedMetric {
  case object CountAll extends PushedMetric {
    override def column: Option[String] = None
    override def outputType: DataType = LongType
    override def describe: String = "COUNT(*)"
  }

  final case class CountOf(name: String) extends PushedMetric {
    override def column: Option[String] = Some(name)
    override def outputType: DataType = LongType
    override def describe: String = s"COUNT($name)"
  }

  /** SUM of an integral column is a LONG (exact); of a floating column a DOUBLE. */
  final case class SumOf(name: String, inputType: DataType) extends PushedMetric {
    override def column: Option[String] = Some(name)
    override def outputType: DataType = if (isIntegral(inputType)) LongType else DoubleType
    override def describe: String = s"SUM($name)"
  }

  final case class MinOf(name: String, inputType: DataType) extends PushedMetric {
    override def column: Option[String] = Some(name)
    override def outputType: DataType = inputType
    override def describe: String = s"MIN($name)"
  }

  final case class MaxOf(name: String, inputType: DataType) extends PushedMetric {
    override def column: Option[String] = Some(name)
    override def outputType: DataType = inputType
    override def describe: String = s"MAX($name)"
  }

  def isIntegral(dt: DataType): Boolean = IntegerTypes.contains(dt)
}

/**
 * An aggregation every split answers on its own, one partial row per group: the group values
 * in Spark's order, then one partial value per aggregate function in Spark's order. Immutable;
 * built on the driver, read on executors.
 *
 * @param countField a single-valued fast field whose value count (plus the matches without a
 *                   value) counts a filtered split's matches without listing them
 * @param fetchFields the data columns the aggregation reads, as the splits hold them: what a
 *                   split fetches to aggregate its rows itself when tantivy cannot answer exactly
 *                   (a group with more values than one terms aggregation returns, a NaN)
 * @param nonNullColumns columns the pushed filters hold non-null in every match (an IsNotNull
 *                   or a comparison of the column at the filters' top level): a group on one
 *                   of them has no NULL key to look for
 */
final case class AggregatePlan(
    groupBy: Seq[GroupColumn],
    metrics: Seq[PushedMetric],
    countField: Option[String] = None,
    fetchFields: Seq[IndexedField] = Nil,
    nonNullColumns: Set[String] = Set.empty) {

  /** The scan's output: group columns in Spark's order, then the partial values. */
  def schema: StructType = StructType(
    groupBy.zipWithIndex.map { case (g, i) =>
      StructField(s"group_$i", g.dataType, nullable = true)
    } ++
      metrics.zipWithIndex.map { case (m, i) =>
        StructField(s"agg_${i}_${m.describe}", m.outputType, nullable = true)
      })

  /** The data columns bucketed by terms aggregations, outermost first. */
  def dataGroups: Seq[GroupColumn] = groupBy.filterNot(_.isPartition)

  /** Whether a split must count its matching documents (COUNT(*), or any group's doc count). */
  def needsDocCount: Boolean = metrics.contains(PushedMetric.CountAll)

  /** Columns whose SUM, MIN or MAX is asked: each gets one stats aggregation. */
  def statsColumns: Seq[String] = metrics.collect {
    case PushedMetric.SumOf(c, _) => c
    case PushedMetric.MinOf(c, _) => c
    case PushedMetric.MaxOf(c, _) => c
  }.distinct

  /** Columns only counted: each gets one value-count aggregation. */
  def countedColumns: Seq[String] =
    metrics.collect { case PushedMetric.CountOf(c) => c }.distinct.filterNot(statsColumns.contains)

  def describe: String =
    s"PushedAggregation: [${metrics.map(_.describe).mkString(", ")}], " +
      s"PushedGroupBy: [${groupBy.map(_.describe).mkString(", ")}]"
}

object AggregatePlan {

  /**
   * Data columns grouped in one pushed aggregation, at most (NULL keys that tantivy cannot
   * bucket cost up to 2^n searches).
   */
  val MaxDataGroups = 4

  /**
   * The plan for Spark's `aggregation`, if every split can answer it exactly; None otherwise,
   * and Spark aggregates the rows itself. Pushed: COUNT(*); COUNT, SUM, MIN and MAX of fast
   * integer and floating columns (not decimals, held as doubles), MIN and MAX of fast dates, and
   * COUNT of fast booleans, dates and timestamps; grouped by partition columns and up to
   * [[MaxDataGroups]] fast `string`, integer, boolean or date columns. Timestamps are held to the
   * second in fast fields, so their groups are not pushed, and their MIN and MAX only where no
   * kept split holds a timestamp with a fraction of a second (`wholeSeconds`); floating groups are not
   * (NaN and -0.0 group differently in tantivy). Every data column read must be stored, so that a
   * split can fall back to aggregating its rows itself.
   *
   * @param exactAsDouble whether a LONG or INT column's sums (and values) in every split stay
   *                      within 2^53, so tantivy's double arithmetic is exact (from the log's
   *                      statistics); asked only of integer columns summed, compared or grouped
   * @param wholeSeconds  whether every kept split is recorded as holding only whole seconds in
   *                      the timestamp column (the add's `stats`, see `stats/SplitCounts`)
   * @param nonNegative   whether no candidate split holds a timestamp of `column` before 1970
   *                      (from the log's statistics): tantivy truncates timestamps to the
   *                      second towards zero, so only then are its date_histogram keys Spark's
   */
  /** The kinds of fast field whose value count can count a split's matches, preferred first. */
  private val CountKinds =
    Seq(IndexKind.I64, IndexKind.F64, IndexKind.DateTime, IndexKind.Bool, IndexKind.RawString)

  /** Whether a value count of `f` can count matches (see `countField`). */
  def countable(f: IndexedField): Boolean = f.fast && CountKinds.contains(f.kind)

  def of(
      aggregation: Aggregation,
      schema: TableIndexSchema,
      tableSchema: StructType,
      exactAsDouble: String => Boolean,
      nonNegative: String => Boolean = _ => false,
      wholeSeconds: String => Boolean = _ => false): Option[AggregatePlan] = {
    val aggs = aggregation.aggregateExpressions().toSeq
    if (aggs.isEmpty) return None
    def column(e: AnyRef): Option[String] = e match {
      case r: NamedReference if r.fieldNames().length == 1 =>
        tableSchema.fields.find(_.name == r.fieldNames().head).map(_.name)
      case _ => None
    }
    def dataField(name: String): Option[IndexedField] =
      if (schema.isPartitionColumn(name)) None
      else schema.field(name).filter(f => f.fast && f.stored && f.indexed)
    def numeric(f: IndexedField): Boolean = f.dataType match {
      case LongType => f.kind == IndexKind.I64 && exactAsDouble(f.name)
      case t if IntegerTypes.contains(t) => f.kind == IndexKind.I64
      case DoubleType | FloatType => f.kind == IndexKind.F64
      case _ => false
    }
    // A fast timestamp field may hold seconds only: exact where no value has a fraction.
    def seconds(f: IndexedField): Boolean =
      f.kind == IndexKind.DateTime && f.dataType == TimestampType && wholeSeconds(f.name)
    def metric(a: AggregateFunc): Option[(PushedMetric, Option[IndexedField])] = a match {
      case _: CountStar => Some((PushedMetric.CountAll, None))
      case c: Count if !c.isDistinct =>
        column(c.column).flatMap(dataField).filter { f =>
          Seq(IndexKind.I64, IndexKind.F64, IndexKind.Bool, IndexKind.DateTime).contains(f.kind)
        }.map(f => (PushedMetric.CountOf(f.name), Some(f)))
      case s: Sum if !s.isDistinct =>
        column(s.column).flatMap(dataField).filter(numeric)
          .map(f => (PushedMetric.SumOf(f.name, f.dataType), Some(f)))
      case m: Min =>
        column(m.column).flatMap(dataField).filter(f => numeric(f) || isDate(f) || seconds(f))
          .map(f => (PushedMetric.MinOf(f.name, f.dataType), Some(f)))
      case m: Max =>
        column(m.column).flatMap(dataField).filter(f => numeric(f) || isDate(f) || seconds(f))
          .map(f => (PushedMetric.MaxOf(f.name, f.dataType), Some(f)))
      case _ => None
    }
    val metrics = aggs.map(metric)
    if (metrics.exists(_.isEmpty)) return None
    val groups = aggregation.groupByExpressions().toSeq.map {
      case f: UserDefinedScalarFunc if f.children().nonEmpty =>
        for {
          bucket <- Bucket.fromCanonicalName(f.canonicalName())
          field <- column(f.children().head).flatMap(dataField)
          if bucketable(bucket, field, exactAsDouble, nonNegative)
        } yield (
          GroupColumn(field.name, bucket.resultType, isPartition = false, Some(bucket)),
          Some(field))
      case e => column(e).flatMap { name =>
          if (schema.isPartitionColumn(name))
            Some((GroupColumn(name, tableSchema(name).dataType, isPartition = true), None))
          else dataField(name).filter(groupable(_, exactAsDouble))
            .map(f => (GroupColumn(name, f.dataType, isPartition = false), Some(f)))
        }
    }
    if (groups.exists(_.isEmpty)) return None
    val columns = groups.flatten
    if (columns.count(!_._1.isPartition) > MaxDataGroups) return None
    // tantivy4java 0.31.0 nests no aggregation under a range: one range, innermost, COUNT(*) only.
    val ranges = columns.count(_._1.bucket.exists(_.isInstanceOf[RangeBucket]))
    if (ranges > 1 || ranges == 1 && metrics.flatten.exists(_._1 != PushedMetric.CountAll))
      return None
    val countField = CountKinds.view
      .flatMap(k => schema.fields.find(f => f.kind == k && countable(f))).headOption.map(_.name)
    val fetch = (columns.flatMap(_._2) ++ metrics.flatten.flatMap(_._2)).distinct
    Some(AggregatePlan(columns.map(_._1), metrics.flatten.map(_._1), countField, fetch))
  }

  /**
   * Whether tantivy's aggregation of `bucket` over `f` gives exactly Spark's keys: histograms
   * and ranges of fast doubles, and of fast integers exact as doubles (with whole range bounds:
   * tantivy compares an integer column with integer bounds); date histograms of fast timestamps
   * at whole seconds (what fast fields hold) from 1970 on.
   */
  private def bucketable(
      bucket: Bucket,
      f: IndexedField,
      exactAsDouble: String => Boolean,
      nonNegative: String => Boolean): Boolean = {
    def number = (f.kind, f.dataType) match {
      case (IndexKind.F64, DoubleType | FloatType) => true
      case (IndexKind.I64, LongType) => exactAsDouble(f.name)
      case (IndexKind.I64, t) => IntegerTypes.contains(t)
      case _ => false
    }
    bucket match {
      case _: HistogramBucket => number
      case r: RangeBucket =>
        number && (f.kind == IndexKind.F64 ||
          r.ranges.flatMap(x => x.from ++ x.to).forall(b => b.isWhole && math.abs(b) < 1e15))
      case d: DateHistogramBucket =>
        f.kind == IndexKind.DateTime && f.dataType == TimestampType &&
        d.intervalMicros % 1000000L == 0 && d.offsetMicros % 1000000L == 0 && nonNegative(f.name)
    }
  }

  private def isDate(f: IndexedField): Boolean =
    f.kind == IndexKind.DateTime && f.dataType == DateType

  /** A data column whose fast-field terms are exactly the values Spark groups by. */
  private def groupable(f: IndexedField, exactAsDouble: String => Boolean): Boolean =
    (f.kind, f.dataType) match {
      case (IndexKind.RawString, StringType) => true
      case (IndexKind.I64, LongType) => exactAsDouble(f.name)
      case (IndexKind.I64, t) => IntegerTypes.contains(t)
      case (IndexKind.Bool, BooleanType) => true
      case (IndexKind.DateTime, DateType) => true
      case _ => false
    }
}

package io.indextables.spark.expressions

import scala.util.Try

import org.apache.spark.sql.catalyst.{FunctionIdentifier, InternalRow}
import org.apache.spark.sql.catalyst.expressions.{ApplyFunctionExpression, Expression, ExpressionInfo}
import org.apache.spark.sql.connector.catalog.functions.ScalarFunction
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

import io.indextables.spark.IndexTablesErrors

/**
 * A bucket function as Spark evaluates it: a V2 scalar function over the column (the other
 * arguments are literals, kept as children so the column's SQL name shows them). Spark plans it
 * as an [[ApplyFunctionExpression]], which V2 aggregate pushdown hands to the scan builder as a
 * `UserDefinedScalarFunc` carrying [[Bucket.canonicalName]].
 */
final case class BucketFunction(bucket: Bucket, argumentTypes: Seq[DataType])
    extends ScalarFunction[AnyRef] {
  override def inputTypes(): Array[DataType] = argumentTypes.toArray
  override def resultType(): DataType = bucket.resultType
  override def name(): String = bucket.function
  override def canonicalName(): String = bucket.canonicalName
  override def isResultNullable: Boolean = true

  override def produceResult(input: InternalRow): AnyRef =
    if (input.isNullAt(0)) null
    else bucket.keyOf(input.get(0, argumentTypes.head)).asInstanceOf[AnyRef]
}

/**
 * The bucket functions' SQL registrations, as (name, info, builder) triples for
 * `SparkSessionExtensions.injectFunction`, with upstream IndexTables' names and arguments:
 *  - `indextables_histogram(col, interval[, offset])`;
 *  - `indextables_date_histogram(col, 'interval'[, 'offset'])`, UTC;
 *  - `indextables_range(col, name1, from1, to1, ...)`, NULL bounds unbounded.
 * Every argument after the column must be a literal; a bad one fails analysis with a clear error.
 */
object BucketFunctions {

  type Builder = Seq[Expression] => Expression

  val all: Seq[(FunctionIdentifier, ExpressionInfo, Builder)] = Seq(
    (
      Bucket.Histogram,
      "_FUNC_(col, interval[, offset]) - The bucket of a numeric value: " +
        "floor((col - offset) / interval) * interval + offset, as a DOUBLE.",
      histogram _),
    (
      Bucket.DateHistogram,
      "_FUNC_(col, 'interval'[, 'offset']) - The start (UTC) of the fixed interval ('30m', " +
        "'1h', '1d'; units ms, s, m, h, d) a timestamp falls into, as a TIMESTAMP.",
      dateHistogram _),
    (
      Bucket.Range,
      "_FUNC_(col, name1, from1, to1, ...) - The name of the range [from, to) a numeric value " +
        "falls into (NULL bounds are unbounded; ranges must not overlap), or NULL if none.",
      range _)
  ).map { case (name, usage, build) =>
    (
      FunctionIdentifier(name),
      new ExpressionInfo(
        classOf[ApplyFunctionExpression].getCanonicalName,
        null,
        name,
        usage,
        "",
        "",
        "",
        "",
        "",
        "",
        ""),
      build)
  }

  private def histogram(args: Seq[Expression]): Expression = {
    val f = Bucket.Histogram
    takesTwoOrThree(f, args)
    val interval = number(f, "interval", args(1))
      .filter(d => d > 0 && !d.isInfinite)
      .getOrElse(throw IndexTablesErrors.bucketFunctionArguments(
        f,
        s"interval must be a positive number, got ${args(1).sql}"))
    val offset = args.lift(2).map { a =>
      number(f, "offset", a).filterNot(_.isInfinite).getOrElse(
        throw IndexTablesErrors.bucketFunctionArguments(
          f,
          s"offset must be a number, got ${a.sql}"))
    }.getOrElse(0.0)
    apply(f, HistogramBucket(interval, offset), args)
  }

  private def dateHistogram(args: Seq[Expression]): Expression = {
    val f = Bucket.DateHistogram
    takesTwoOrThree(f, args)
    val interval = string(f, "interval", args(1))
      .flatMap(s => Bucket.parseDuration(s, signed = false)).filter(_ > 0).getOrElse(
        throw IndexTablesErrors.bucketFunctionArguments(
          f,
          s"interval must be a string like '30m', '1h' or '1d' (units ms, s, m, h, d), " +
            s"got ${args(1).sql}"))
    val offset = args.lift(2).map { a =>
      string(f, "offset", a).flatMap(s => Bucket.parseDuration(s, signed = true)).getOrElse(
        throw IndexTablesErrors.bucketFunctionArguments(
          f,
          s"offset must be a string like '6h' or '-30m', got ${a.sql}"))
    }.getOrElse(0L)
    apply(f, DateHistogramBucket(interval, offset), args)
  }

  private def range(args: Seq[Expression]): Expression = {
    val f = Bucket.Range
    if (args.size < 4 || (args.size - 1) % 3 != 0)
      throw IndexTablesErrors.bucketFunctionArguments(
        f,
        s"takes the column and then (name, from, to) triples, got ${args.size} arguments")
    val ranges = args.tail.grouped(3).map { case Seq(n, from, to) =>
      val name = string(f, "a range name", n).getOrElse(
        throw IndexTablesErrors.bucketFunctionArguments(
          f,
          s"a range name must be a string, got ${n.sql}"))
      def bound(e: Expression) =
        if (e.foldable && e.eval() == null) None
        else Some(number(f, "a bound", e).filterNot(_.isNaN).getOrElse(
          throw IndexTablesErrors.bucketFunctionArguments(
            f,
            s"range '$name' has bound ${e.sql}: bounds are numbers or NULL")))
      NamedRange(name, bound(from), bound(to))
    }.toSeq
    ranges.groupBy(_.name).collectFirst {
      case (n, rs) if rs.size > 1 =>
        throw IndexTablesErrors.bucketFunctionArguments(f, s"range '$n' is named twice")
    }
    ranges.foreach { r =>
      if (r.from.isEmpty && r.to.isEmpty || r.from.zip(r.to).exists { case (a, b) => a >= b })
        throw IndexTablesErrors.bucketFunctionArguments(
          f,
          s"range '${r.name}' must have from < to, one of them at least not NULL")
    }
    val sorted = ranges.sortBy(_.from.getOrElse(Double.NegativeInfinity))
    sorted.zip(sorted.drop(1)).foreach { case (a, b) =>
      if (a.to.forall(t => b.from.forall(t > _)))
        throw IndexTablesErrors.bucketFunctionArguments(
          f,
          s"ranges '${a.name}' and '${b.name}' overlap: a value's group must be one range")
    }
    apply(f, RangeBucket(ranges), args)
  }

  /** A histogram's arguments: the column, the interval, and an optional offset. */
  private def takesTwoOrThree(function: String, args: Seq[Expression]): Unit =
    if (args.size < 2 || args.size > 3)
      throw IndexTablesErrors.bucketFunctionArguments(
        function,
        s"takes 2 or 3 arguments, got ${args.size}")

  private def apply(function: String, bucket: Bucket, args: Seq[Expression]): Expression = {
    val column = args.head
    if (!Bucket.accepts(function, column.dataType))
      throw IndexTablesErrors.bucketFunctionArguments(
        function,
        s"cannot bucket ${column.sql} of type ${column.dataType.sql}" +
          (if (function == Bucket.DateHistogram) ": it takes a TIMESTAMP column"
           else ": it takes a numeric column")
      )
    ApplyFunctionExpression(BucketFunction(bucket, args.map(_.dataType)), args)
  }

  private def literal(function: String, what: String, e: Expression): Any = {
    if (!e.foldable)
      throw IndexTablesErrors.bucketFunctionArguments(
        function,
        s"$what must be a literal, got ${e.sql}")
    e.eval()
  }

  private def number(function: String, what: String, e: Expression): Option[Double] =
    literal(function, what, e) match {
      case null => None
      case _: UTF8String => None
      case v => Try(Bucket.asDouble(v)).toOption
    }

  private def string(function: String, what: String, e: Expression): Option[String] =
    literal(function, what, e) match {
      case s: UTF8String => Some(s.toString)
      case _ => None
    }
}

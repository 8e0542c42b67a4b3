package io.indextables.spark.stats

import java.math.BigDecimal

import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String

/**
 * The min/max statistics of a split made of other splits (a merge), from theirs: per column, the
 * least of the minimums and the greatest of the maximums, compared as the column's type orders
 * its values (numbers numerically, strings by their UTF-8 bytes as Spark does, timestamps as
 * instants). A column a split records no value for (all NULL there) takes the others' values;
 * when one split records no statistics at all, the merged split records none either, so a
 * reader never skips it on a bound that does not hold. Thread-safe (stateless).
 */
object CombinedStatistics {

  /** The combined (minValues, maxValues), or None when a source has no statistics. */
  def combine(
      schema: StructType,
      sources: Seq[(Option[Map[String, String]], Option[Map[String, String]])])
      : Option[(Map[String, String], Map[String, String])] =
    if (sources.exists(s => s._1.isEmpty || s._2.isEmpty)) None
    else {
      val types = schema.fields.map(f => f.name -> f.dataType).toMap
      def fold(maps: Seq[Map[String, String]], pickLess: Boolean): Map[String, String] =
        maps.flatMap(_.keys).distinct.flatMap { column =>
          val values = maps.flatMap(_.get(column)).filter(_ != null)
          types.get(column).filter(_ => values.nonEmpty).map { dt =>
            val ordering = orderingOf(dt)
            column -> (if (pickLess) values.min(ordering) else values.max(ordering))
          }
        }.toMap
      Some((
        fold(sources.map(_._1.get), pickLess = true),
        fold(sources.map(_._2.get), pickLess = false)))
    }

  private def orderingOf(dt: DataType): Ordering[String] = dt match {
    case ByteType | ShortType | IntegerType | LongType | DoubleType | FloatType | _: DecimalType =>
      Ordering.by[String, BigDecimal](s => new BigDecimal(s.trim))(Ordering.comparatorToOrdering(
        java.util.Comparator.naturalOrder[BigDecimal]()))
    case TimestampType => Ordering.by[String, Long](StatsValues.parseTimestamp)
    case _ =>
      Ordering.comparatorToOrdering[UTF8String](java.util.Comparator.naturalOrder[UTF8String]())
        .on[String](UTF8String.fromString)
  }
}

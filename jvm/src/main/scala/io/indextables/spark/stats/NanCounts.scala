package io.indextables.spark.stats

import scala.collection.JavaConverters._
import scala.util.Try

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode

/**
 * How many NaN values each floating column of a split holds, in the add action's `stats` JSON
 * (the protocol's "JSON-encoded statistics"): `{"nanCount": {"<column>": <n>, ...}}`. Min/max
 * statistics leave NaN out, and Spark orders NaN above every number, so a range on a floating
 * column is answered by the index exactly only on splits recorded as holding no NaN in it. A
 * split without the record (written before it existed, or by a writer that does not count) may
 * hold NaN in any column. Stateless and thread-safe.
 */
object NanCounts {
  private val mapper = new ObjectMapper()
  private val Key = "nanCount"

  /** The `stats` JSON recording `counts`; None when no floating column is counted. */
  def json(counts: Map[String, Long]): Option[String] =
    if (counts.isEmpty) None
    else {
      val root = mapper.createObjectNode()
      val node = root.putObject(Key)
      counts.toSeq.sortBy(_._1).foreach { case (c, n) => node.put(c, n) }
      Some(mapper.writeValueAsString(root))
    }

  /** The counts `stats` records; empty when it records none (or cannot be read). */
  def of(stats: Option[String]): Map[String, Long] =
    stats.flatMap(s => Try(mapper.readTree(s)).toOption)
      .flatMap(t => Option(t.get(Key)))
      .collect { case o: ObjectNode => o }
      .map(_.fields().asScala.collect {
        case e if e.getValue.canConvertToLong => e.getKey -> e.getValue.asLong()
      }.toMap)
      .getOrElse(Map.empty)

  /** The columns a split whose `stats` are these is known to hold no NaN in. */
  def nanFree(stats: Option[String]): Set[String] = of(stats).collect { case (c, 0L) => c }.toSet

  /**
   * The counts of a split made of `sources` (a merge): per column, their sum where every source
   * records it; a column one source does not record is not recorded.
   */
  def combine(sources: Seq[Option[String]]): Option[String] = {
    val all = sources.map(of)
    val columns = all.headOption.map(_.keySet).getOrElse(Set.empty)
      .filter(c => all.forall(_.contains(c)))
    json(columns.iterator.map(c => c -> all.map(_(c)).sum).toMap)
  }
}

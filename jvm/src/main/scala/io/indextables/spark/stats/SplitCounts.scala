package io.indextables.spark.stats

import scala.jdk.CollectionConverters._
import scala.util.Try

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import com.fasterxml.jackson.databind.node.ObjectNode

/**
 * Per-column counts of values min/max statistics cannot describe, in the add action's `stats`
 * JSON (the protocol's "JSON-encoded statistics"):
 * `{"nanCount": {"<floating column>": n}, "signedNanCount": {...}, "subSecondCount": {...}}`.
 *  - `nanCount`: NaN values. Min/max leave NaN out.
 *  - `signedNanCount`: NaN values whose sign bit is set (as `sqrt(-1.0)` makes them on x86).
 *    Spark orders every NaN above every number; tantivy orders a NaN by its bits, a plain one
 *    above +Infinity (as Spark) and one with the sign bit below -Infinity. So a range on a
 *    floating column is answered by the index exactly on splits recorded to hold no NaN, or no
 *    NaN with the sign bit.
 *  - `subSecondCount`: timestamps with a fraction of a second. A fast field may hold timestamps
 *    to the second only, so its MIN/MAX is Spark's only on splits holding none.
 * A split without a record (written before it existed, or by a writer that does not count) may
 * hold such values in any column. Stateless and thread-safe.
 */
object SplitCounts {
  private val mapper = new ObjectMapper()

  val NanCount = "nanCount"
  val SignedNanCount = "signedNanCount"
  val SubSecondCount = "subSecondCount"
  private val Kinds = Seq(NanCount, SignedNanCount, SubSecondCount)

  /** The `stats` JSON recording `counts` (by kind, then column); None when none is counted. */
  def json(counts: Map[String, Map[String, Long]]): Option[String] =
    if (counts.forall(_._2.isEmpty)) None
    else {
      val root = mapper.createObjectNode()
      Kinds.filter(k => counts.get(k).exists(_.nonEmpty)).foreach { k =>
        val node = root.putObject(k)
        counts(k).toSeq.sortBy(_._1).foreach { case (c, n) => node.put(c, n) }
      }
      Some(mapper.writeValueAsString(root))
    }

  /** The counts of `kind` that `stats` records; empty when it records none (or is unreadable). */
  def of(stats: Option[String], kind: String): Map[String, Long] = counts(parse(stats), kind)

  /**
   * The columns a split whose `stats` are these is known to hold no value of at least one of
   * `kinds` in (the JSON is parsed once).
   */
  def noneIn(stats: Option[String], kinds: String*): Set[String] = {
    val tree = parse(stats)
    kinds.flatMap(k => counts(tree, k).collect { case (c, 0L) => c }).toSet
  }

  private def parse(stats: Option[String]): Option[JsonNode] =
    stats.flatMap(s => Try(mapper.readTree(s)).toOption)

  private def counts(tree: Option[JsonNode], kind: String): Map[String, Long] =
    tree.flatMap(t => Option(t.get(kind)))
      .collect { case o: ObjectNode => o }
      .map(_.fields().asScala.collect {
        case e if e.getValue.canConvertToLong => e.getKey -> e.getValue.asLong()
      }.toMap)
      .getOrElse(Map.empty)

  /**
   * The counts of a split made of `sources` (a merge): per kind and column, their sum where
   * every source records it; a column one source does not record is not recorded.
   */
  def combine(sources: Seq[Option[String]]): Option[String] =
    json(Kinds.map { k =>
      val all = sources.map(of(_, k))
      val columns = all.headOption.map(_.keySet).getOrElse(Set.empty)
        .filter(c => all.forall(_.contains(c)))
      k -> columns.iterator.map(c => c -> all.map(_(c)).sum).toMap
    }.toMap)
}

package io.indextables.spark.rank

import java.io.InputStream
import java.nio.file.{Files, Path, StandardCopyOption}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}

import io.indextables.spark.IndexTablesErrors

/**
 * The JNI binding of the native ranker (jvm/native/rank, docs/ranking-native.md): BM25 over a
 * split (the split file itself, or a tantivy index extracted from it), with statistics the
 * caller supplies. Its methods are the library's entry points,
 * `Java_io_indextables_spark_rank_NativeRankerLib_<name>`; each throws a `RuntimeException`
 * naming what is at fault. Use it through [[RankedIndex]].
 */
final class NativeRankerLib {

  /** Opens the index directory `dir`: a handle for the other methods, until [[close]]. */
  @native def open(dir: String): Long

  /**
   * Opens the split file at `path` as it is, read-only and memory-mapped, without extracting
   * it: a handle as [[open]]'s. A damaged split (a footer or file table that does not fit the
   * file, no `meta.json`) throws, naming the file.
   */
  @native def openSplit(path: String): Long

  /** Releases `handle`; a closed handle is ignored. */
  @native def close(handle: Long): Unit

  /** The index's statistics for the terms `astJson` scores, as [[RankStatistics]] JSON. */
  @native def statistics(handle: Long, astJson: String): String

  /** `Array(long[] addresses, float[] scores)`: the best `k`, best first, ties by address. */
  @native def topK(handle: Long, astJson: String, statsJson: String, k: Int): Array[AnyRef]

  /**
   * The statistics of every index of `handles` for the terms of all of `asts`, summed (each
   * index's terms counted once), as [[RankStatistics]] JSON; on up to `threads` threads.
   */
  @native def statisticsMany(handles: Array[Long], asts: Array[String], threads: Int): String

  /**
   * Each index's best `ks(i)` for `asts(i)`, as [[topK]] gives it, on up to `threads` threads:
   * `Array(int[] counts, long[] addresses, float[] scores)`, index i's `counts(i)` hits after
   * those of the indexes before it.
   */
  @native def topKMany(
      handles: Array[Long],
      asts: Array[String],
      statsJson: String,
      ks: Array[Int],
      threads: Int): Array[AnyRef]

  /** `Array(long[] addresses, float[] scores)`: every doc the query matches, by address. */
  @native def scoreAll(handle: Long, astJson: String, statsJson: String): Array[AnyRef]

  /**
   * The best fragment of `text`, a value of `field` cut by `tokenizer`, at most `maxChars`
   * characters (0: all of it), with what `astJson` matched in it between `preTag` and
   * `postTag`, the text escaped for HTML when `escapeHtml`; null when the value does not match
   * the query's clauses on `field` or matches them without a term to mark (docs/highlights.md).
   */
  @native def snippet(
      tokenizer: String,
      field: String,
      astJson: String,
      text: String,
      maxChars: Int,
      preTag: String,
      postTag: String,
      escapeHtml: Boolean): String
}

object NativeRanker {

  /** Where the build (build.sbt) puts the library in the JAR. */
  val ResourcePath = "/native/linux-x86_64/libindextables_rank.so"

  /** The library, loaded once per JVM: the resource is copied to a temp file and loaded. */
  lazy val lib: NativeRankerLib = {
    val in: InputStream = classOf[NativeRankerLib].getResourceAsStream(ResourcePath)
    if (in == null) {
      throw IndexTablesErrors.nativeRankerMissing(ResourcePath)
    }
    val file =
      try {
        val f = Files.createTempFile("libindextables_rank", ".so")
        f.toFile.deleteOnExit()
        Files.copy(in, f, StandardCopyOption.REPLACE_EXISTING)
        f
      } finally in.close()
    System.load(file.toAbsolutePath.toString)
    new NativeRankerLib
  }

  /**
   * [[NativeRankerLib.snippet]]: the highlighted fragment of `text`, or None when nothing of it
   * matched. Needs no index: the query is evaluated against the value itself.
   */
  def snippet(
      tokenizer: String,
      field: String,
      astJson: String,
      text: String,
      maxChars: Int,
      preTag: String,
      postTag: String,
      escapeHtml: Boolean): Option[String] =
    Option(lib.snippet(tokenizer, field, astJson, text, maxChars, preTag, postTag, escapeHtml))

  private[rank] def scored(result: Array[AnyRef]): ScoredDocs =
    ScoredDocs(
      result(0).asInstanceOf[Array[Long]],
      result(1).asInstanceOf[Array[Float]])
}

/**
 * The document frequency of one term: `term` is the base64 of the term's value bytes (tantivy's
 * `Term::serialized_value_bytes`, the UTF-8 text for a text field).
 */
final case class TermStat(field: String, term: String, docFreq: Long)

/**
 * BM25 statistics for a query's terms: the doc count, each field's token count and each
 * term's doc freq. A split's own ([[RankedIndex.statistics]]) summed over a table's splits
 * (`+`) ranks each split as one index of all the table's docs would. `exact` is false when
 * the native translation of the query replaced a clause that it cannot score (a range, a
 * wildcard, ...), so its matches may differ from the JVM's own.
 *
 * Given to [[RankedIndex.topK]] / [[RankedIndex.scoreAll]], a missing value is taken from that
 * index's own: numDocs 0, a field absent from `fieldTokens`, a term absent from `terms`.
 */
final case class RankStatistics(
    numDocs: Long,
    fieldTokens: Map[String, Long],
    terms: Seq[TermStat],
    exact: Boolean = true) {

  def +(o: RankStatistics): RankStatistics = RankStatistics.sum(Seq(this, o))

  /** As JSON, the form the native ranker takes (made once: every split of a query is given it). */
  @transient lazy val toJson: String = {
    val root = RankStatistics.mapper.createObjectNode()
    root.put("numDocs", numDocs)
    val fields = root.putObject("fields")
    fieldTokens.toSeq.sortBy(_._1).foreach { case (f, n) => fields.put(f, n) }
    val ts = root.putArray("terms")
    terms.foreach { t =>
      ts.addObject().put("field", t.field).put("term", t.term).put("docFreq", t.docFreq)
    }
    root.put("exact", exact)
    RankStatistics.mapper.writeValueAsString(root)
  }
}

object RankStatistics {
  private[rank] val mapper = new ObjectMapper()

  /** No statistics: a ranked index given these uses its own. */
  val empty: RankStatistics = RankStatistics(0L, Map.empty, Seq.empty, exact = true)

  /** The statistics of all of `parts` together (each a different set of docs), in one pass. */
  def sum(parts: Iterable[RankStatistics]): RankStatistics = {
    var numDocs = 0L
    var exact = true
    val tokens = scala.collection.mutable.HashMap.empty[String, Long]
    val freqs = scala.collection.mutable.HashMap.empty[(String, String), Long]
    parts.foreach { p =>
      numDocs += p.numDocs
      exact &&= p.exact
      p.fieldTokens.foreach { case (f, n) => tokens(f) = tokens.getOrElse(f, 0L) + n }
      p.terms.foreach { t =>
        val key = (t.field, t.term)
        freqs(key) = freqs.getOrElse(key, 0L) + t.docFreq
      }
    }
    val terms = freqs.iterator.map { case ((f, t), n) => TermStat(f, t, n) }.toVector
      .sortBy(t => (t.field, t.term))
    RankStatistics(numDocs, tokens.toMap, terms, exact)
  }

  def fromJson(s: String): RankStatistics = {
    val root: JsonNode =
      try mapper.readTree(s)
      catch {
        case e: Exception =>
          throw IndexTablesErrors.internalError(s"Ranking statistics are not valid JSON: $s ($e)")
      }
    if (root == null || !root.isObject) {
      throw IndexTablesErrors.internalError(s"Ranking statistics are not a JSON object: $s")
    }
    val fields = Option(root.get("fields")).filter(_.isObject).map { node =>
      node.fields().asScala.map(e => e.getKey -> e.getValue.asLong).toMap
    }.getOrElse(Map.empty[String, Long])
    val terms = Option(root.get("terms")).filter(_.isArray).map { node =>
      node.elements().asScala.map { t =>
        TermStat(t.path("field").asText, t.path("term").asText, t.path("docFreq").asLong)
      }.toVector
    }.getOrElse(Vector.empty[TermStat])
    RankStatistics(
      root.path("numDocs").asLong(0L),
      fields,
      terms,
      !root.has("exact") || root.get("exact").asBoolean(true))
  }
}

/** Docs and their scores: `addresses(i)` (segment ord << 32 | doc id) scored `scores(i)`. */
final case class ScoredDocs(addresses: Array[Long], scores: Array[Float]) {
  def size: Int = addresses.length
}

/**
 * A split opened by the native ranker: the split file itself ([[RankedIndex.openSplit]]) or a
 * tantivy index directory extracted from one ([[RankedIndex.open]]). Thread-safe;
 * [[close]] is idempotent, and any use after it throws.
 */
final class RankedIndex private (handle: Long) extends AutoCloseable {
  @volatile private var closed = false

  private[rank] def live(): Long = {
    if (closed) throw IndexTablesErrors.internalError(s"RankedIndex (handle $handle) is closed")
    handle
  }

  def statistics(astJson: String): RankStatistics =
    RankStatistics.fromJson(NativeRanker.lib.statistics(live(), astJson))

  def topK(astJson: String, stats: RankStatistics, k: Int): ScoredDocs =
    NativeRanker.scored(NativeRanker.lib.topK(live(), astJson, stats.toJson, k))

  def scoreAll(astJson: String, stats: RankStatistics): ScoredDocs =
    NativeRanker.scored(NativeRanker.lib.scoreAll(live(), astJson, stats.toJson))

  def close(): Unit = synchronized {
    if (!closed) {
      closed = true
      NativeRanker.lib.close(handle)
    }
  }
}

object RankedIndex {

  /**
   * The statistics of all of `indexes` (each a different set of docs) for the terms of all of
   * `asts`, summed in one native call on up to `threads` threads: [[RankedIndex.statistics]] of
   * each, added.
   */
  def statistics(indexes: Seq[RankedIndex], asts: Seq[String], threads: Int): RankStatistics =
    RankStatistics.fromJson(
      NativeRanker.lib.statisticsMany(indexes.map(_.live()).toArray, asts.toArray, threads))

  /**
   * Each index's best `ks(i)` for `asts(i)` with `stats`, in one native call on up to `threads`
   * threads: [[RankedIndex.topK]] of each.
   */
  def topK(
      indexes: Seq[RankedIndex],
      asts: Seq[String],
      stats: RankStatistics,
      ks: Seq[Int],
      threads: Int): Seq[ScoredDocs] = {
    val r = NativeRanker.lib.topKMany(
      indexes.map(_.live()).toArray,
      asts.toArray,
      stats.toJson,
      ks.toArray,
      threads)
    val counts = r(0).asInstanceOf[Array[Int]]
    val addresses = r(1).asInstanceOf[Array[Long]]
    val scores = r(2).asInstanceOf[Array[Float]]
    val starts = counts.scanLeft(0)(_ + _)
    counts.indices.map { i =>
      ScoredDocs(
        java.util.Arrays.copyOfRange(addresses, starts(i), starts(i + 1)),
        java.util.Arrays.copyOfRange(scores, starts(i), starts(i + 1)))
    }
  }

  /** Opens `dir`, a tantivy index directory (as `QuickwitSplit.extractSplit` writes one). */
  def open(dir: Path): RankedIndex =
    new RankedIndex(NativeRanker.lib.open(dir.toAbsolutePath.toString))

  /**
   * Opens the split file at `path` as it is (read-only, memory-mapped; no extraction, no copy).
   * It must stay unchanged until [[RankedIndex.close]].
   */
  def openSplit(path: Path): RankedIndex =
    new RankedIndex(NativeRanker.lib.openSplit(path.toAbsolutePath.toString))
}

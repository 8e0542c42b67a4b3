package io.indextables.spark.read

import scala.util.control.NonFatal

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.expressions.{NamedReference, NullOrdering, SortDirection, SortOrder}
import org.apache.spark.sql.connector.read.Scan

import io.indextables.spark.metrics.ScanTaskCounters
import io.indextables.spark.rank.{RankedIndex, RankStatistics}
import io.indextables.spark.read.aggregate.IndexTables4SparkDriverScan
import io.indextables.spark.util.BoundedCache

/**
 * One split's rows of a pushed top-k by `_score`: their addresses (segment << 32 | doc), best
 * first, and their scores (NaN where no text clause matched the row: its `_score` is NULL).
 */
final case class RankedHits(addresses: Array[Long], scores: Array[Float]) {
  def size: Int = addresses.length
}

/**
 * A pushed `ORDER BY _score DESC [NULLS LAST] [, more keys] LIMIT k`.
 *
 * @param more     other sort keys follow `_score`: every row tied with the k-th score is kept,
 *                 and Spark orders them (the sort is then only partially pushed)
 * @param onDriver the top-k is answered on the driver, in its order, and Spark drops its own
 *                 sort and limit (the sort is completely pushed)
 */
private[read] final case class TopN(k: Int, more: Boolean, onDriver: Boolean) {
  def describe: String =
    s"PushedTopN: _score DESC LIMIT $k${if (more) " (ties kept for the later sort keys)" else ""}"
}

/**
 * Ranked search: the `_score` column, and the top-k by it, on the splits' BM25 with the
 * table's statistics, as Elasticsearch's `dfs_query_then_fetch` ranks across shards.
 *
 *  - Statistics ([[statistics]]): the document count, each field's token count and each query
 *    term's document frequency, summed over every live split of the snapshot (not only those
 *    the scan keeps: a row's score does not depend on which split holds it, how the table was
 *    appended to or merged, or which splits a filter pruned). Each split's are computed once
 *    per JVM by the native ranker ([[RankedSplits]]).
 *  - Scores: each split's BM25 of the IndexQuery tree alone, computed with those statistics.
 *    Spark's other filters select rows but add nothing to a score; a row no text clause
 *    matched has a NULL `_score`.
 *  - Top-k ([[select]]), on the driver: each kept split's own best `k` (the native ranker's
 *    top-k when the tree alone selects the rows; else every match scored and the best kept),
 *    merged into the table's best `k`, ties broken by split path and address, so a query
 *    returns the same rows in the same order every time. Only the winners are then read: on
 *    the driver when they are few ([[DriverSearch.mayAnswer]]), else by tasks.
 */
private[read] object Ranking {

  /**
   * The top-k `orders` and `limit` ask for, when this scan can push it: the first key is
   * `_score` descending with NULLs last (Spark's default for DESC), the query has an IndexQuery
   * to score by, and no data column is named `_score`. Otherwise Spark sorts.
   */
  def topN(table: ScanTable, filters: FilterPushdown, orders: Array[SortOrder], limit: Int)
      : Option[TopN] = {
    val byScore = orders.headOption.exists { o =>
      o.direction == SortDirection.DESCENDING && o.nullOrdering == NullOrdering.NULLS_LAST &&
      (o.expression match {
        case r: NamedReference => r.fieldNames.toSeq == Seq(MetadataColumns.Score)
        case _ => false
      })
    }
    if (!byScore || limit <= 0 || table.mixedFilter.isEmpty ||
      table.schema.fieldNames.contains(MetadataColumns.Score)) None
    else {
      val more = orders.length > 1
      Some(TopN(limit, more, !more && DriverSearch.mayAnswer(table, filters.kept.size, limit)))
    }
  }

  // Parsed statistics by their JSON, as every reader of one scan gets the same.
  private val parsed = new BoundedCache[String, RankStatistics](64)

  def statisticsOf(json: String): RankStatistics =
    parsed.getOrElseUpdate(json)(RankStatistics.fromJson(json))

  /** `stats` as JSON, for a [[ReadPlan]]; [[statisticsOf]] it then gives `stats` back unparsed. */
  def statisticsJson(stats: RankStatistics): String = {
    val json = stats.toJson
    parsed.getOrElseUpdate(json)(stats)
    json
  }

  /** Splits given to one native call: few enough that their indexes all stay open. */
  private val Batch = RankedSplits.MaxOpen / 2

  /**
   * The table-wide statistics of the text clauses of `plan`'s variants, over every live split
   * of `in`'s snapshot: one native call per [[Batch]] of splits, which gives each split each
   * distinct tree (its terms counted once) and sums them. Should a call fail, the splits are
   * asked one by one, so that the error names the split at fault.
   */
  def statistics(in: ScanInputs, plan: ReadPlan): RankStatistics = {
    val queries = plan.variants.flatMap(_.scoreQueryJson).distinct
    val splits = in.splitsOf(in.table.snapshot.allFiles, None)
    if (queries.isEmpty) RankStatistics.empty
    else RankStatistics.sum(splits.grouped(Batch).map { batch =>
      try RankedSplits.withIndexes(plan, batch, threads) { indexes =>
          RankedIndex.statistics(indexes, queries, threads)
        }
      catch {
        case NonFatal(_) =>
          RankStatistics.sum(DriverThreads.map(batch, threads) { s =>
            RankedSplits.withIndexes(plan, Seq(s), 1) { ix =>
              RankedSplits.ranked(s, queries.mkString(" ; "))(
                RankedIndex.statistics(ix, queries, 1))
            }
          })
      }
    }.toSeq)
  }

  private def threads: Int =
    2 * org.apache.spark.sql.SparkSession.active.sparkContext.defaultParallelism

  /**
   * The splits of `in` holding the table's best `topN.k` rows by `_score` (with every row tied
   * with the last, when later sort keys decide among them), each with its winners.
   */
  def select(in: ScanInputs, plan: ReadPlan, topN: TopN): Seq[SplitInputPartition] = {
    val stats = plan.scoring.map(statisticsOf).getOrElse(RankStatistics.empty)
    // The tree alone selects the rows: no other filter, so the ranker's own matches are the
    // scan's (where its translation of the tree is exact, see `exact` below).
    val treeAlone = in.filters.data.isEmpty && in.filters.post.isEmpty
    val splits = in.splits(None).toIndexedSeq
    // The native ranker's own top-k serves a split where the tree alone selects the rows and
    // its translation of the tree is exact (its matches are then the scan's); the others score
    // every row the scan's query matches.
    val native = treeAlone && !topN.more && stats.exact
    val (batched, others) =
      splits.indices.partition(i =>
        native && plan.variants(splits(i).variant).scoreQueryJson.isDefined)
    val fromNative = batched.grouped(Batch).flatMap { b =>
      b.zip(nativeBest(plan, b.map(splits), topN, stats))
    }.toMap
    val fromReader =
      others.zip(DriverThreads.map(others, threads)(i => scoredBest(plan, splits(i), topN))).toMap
    val perSplit = splits.indices.map(i => fromNative.getOrElse(i, fromReader(i)))
    val ordered = bestFirst(hitsOf(perSplit), splits(_).path)
    val winners = withTies(ordered, topN, (h: Hit) => h.score)
    winners.groupBy(_.split).toSeq.sortBy(_._1).map { case (i, ws) =>
      splits(i).copy(ranked = Some(RankedHits(ws.map(_.address).toArray, ws.map(_.score).toArray)))
    }
  }

  /** The global order of `selected`'s rows: (split index, position in its winners), best first. */
  def order(selected: Seq[SplitInputPartition]): Seq[(Int, Int)] =
    bestFirst(hitsOf(selected.map(_.ranked.get)), selected(_).path).map(h => (h.split, h.at))

  /** One row of a split's hits: `split` indexes the splits, `at` the split's hits. */
  private final case class Hit(split: Int, at: Int, address: Long, score: Float)

  private def hitsOf(perSplit: Seq[RankedHits]): Seq[Hit] = perSplit.indices.flatMap { i =>
    val h = perSplit(i)
    (0 until h.size).map(j => Hit(i, j, h.addresses(j), h.scores(j)))
  }

  /**
   * The one order of a top-k's rows, the same on every run: best score first
   * ([[compareScores]]), ties by split path, then by address within the split.
   */
  private def bestFirst(hits: Seq[Hit], path: Int => String): Seq[Hit] = hits.sortWith { (x, y) =>
    val c = compareScores(x.score, y.score)
    if (c != 0) c < 0
    else if (path(x.split) != path(y.split)) path(x.split) < path(y.split)
    else x.address < y.address
  }

  /** Best first: higher scores, then a score before none (NaN: the row's `_score` is NULL). */
  private def compareScores(a: Float, b: Float): Int =
    if (a.isNaN && b.isNaN) 0
    else if (a.isNaN) 1
    else if (b.isNaN) -1
    else java.lang.Float.compare(b, a)

  /** The first `k` of `ordered`, and with later sort keys every further row tied with the k-th. */
  private def withTies[T](ordered: Seq[T], topN: TopN, score: T => Float): Seq[T] = {
    val head = ordered.take(topN.k)
    if (!topN.more || head.size < topN.k) head
    else {
      val last = score(head.last)
      head ++ ordered.drop(topN.k).takeWhile(t => compareScores(score(t), last) == 0)
    }
  }

  /**
   * The best rows of each of `splits` by the native ranker's top-k, one call for them all: each
   * asked for as many more as it has deleted docs, which are then left out. Should the call
   * fail, each split is asked alone, so that the error names the split at fault.
   */
  private def nativeBest(
      plan: ReadPlan,
      splits: Seq[SplitInputPartition],
      topN: TopN,
      stats: RankStatistics): Seq[RankedHits] = {
    val queries = splits.map(s => plan.variants(s.variant).scoreQueryJson.get)
    val deleted = DriverThreads.map(splits, threads)(DeletionVectors.of(plan, _))
    val wants = deleted.map { d =>
      (topN.k.toLong + d.fold(0L)(_.getLongCardinality)).min(Int.MaxValue).toInt
    }
    val tops =
      try RankedSplits.withIndexes(plan, splits, threads) { indexes =>
          RankedIndex.topK(indexes, queries, stats, wants, threads)
        }
      catch {
        case NonFatal(_) => splits.indices.map { i =>
            RankedSplits.withIndexes(plan, Seq(splits(i)), 1) { ix =>
              RankedSplits.ranked(splits(i), queries(i))(ix.head.topK(queries(i), stats, wants(i)))
            }
          }
      }
    splits.indices.map { i =>
      val top = tops(i)
      val keep = (0 until top.addresses.length).filter { j =>
        deleted(i).forall { d =>
          val a = top.addresses(j)
          if ((a >>> 32) != 0) {
            throw io.indextables.spark.IndexTablesErrors.splitNotSingleSegment(splits(i).path)
          }
          !d.contains(a.toInt)
        }
      }.take(topN.k)
      RankedHits(keep.map(top.addresses).toArray, keep.map(top.scores).toArray)
    }
  }

  /** One split's best rows: every row the scan's query matches, scored, the best kept. */
  private def scoredBest(plan: ReadPlan, split: SplitInputPartition, topN: TopN): RankedHits = {
    // Planning work, which no scan reports.
    val reader =
      new IndexTables4SparkPartitionReader(plan.copy(limit = None), split, ScanTaskCounters.total())
    val hits =
      try reader.scoredHits()
      finally reader.close()
    val ordered = (0 until hits.size).sortWith { (x, y) =>
      val c = compareScores(hits.scores(x), hits.scores(y))
      if (c != 0) c < 0 else hits.addresses(x) < hits.addresses(y)
    }
    val kept = withTies(ordered, topN, (j: Int) => hits.scores(j))
    RankedHits(kept.map(hits.addresses).toArray, kept.map(hits.scores).toArray)
  }

  /**
   * Each row's score of `scored` (the native ranker's matches of a split, in any order) for
   * the hits (`segments`, `docs`): NaN where the ranker did not match the row.
   */
  def lookup(
      scoredAddresses: Array[Long],
      scoredValues: Array[Float],
      segments: Array[Int],
      docs: Array[Int]): Array[Float] = {
    // The ranker gives its matches in address order (scoreAll); were they not, they are sorted.
    val inOrder = (1 until scoredAddresses.length).forall(i =>
      scoredAddresses(i - 1) < scoredAddresses(i))
    val (sorted, values) =
      if (inOrder) (scoredAddresses, scoredValues)
      else {
        val order = (0 until scoredAddresses.length).sortBy(scoredAddresses(_)).toArray
        (order.map(scoredAddresses), order.map(scoredValues))
      }
    Array.tabulate(docs.length) { i =>
      val a = (segments(i).toLong << 32) | (docs(i).toLong & 0xffffffffL)
      val at = java.util.Arrays.binarySearch(sorted, a)
      if (at >= 0) values(at) else Float.NaN
    }
  }

  /** The scan of a pushed top-k: the winners read on the driver, in order, or by tasks. */
  def scan(in: ScanInputs, topN: TopN): Scan = {
    val plan = in.readPlan(None)
    val selected = select(in, plan, topN)
    if (topN.onDriver) {
      val read: Seq[(Seq[InternalRow], ScanTaskCounters)] =
        DriverThreads.map(selected, threads) { s =>
          val counters = ScanTaskCounters.reading()
          try {
            val reader = new IndexTables4SparkPartitionReader(plan, s, counters)
            try {
              val out = Seq.newBuilder[InternalRow]
              while (reader.next()) out += reader.get()
              (out.result(), counters)
            } finally reader.close()
          } finally counters.close()
        }
      val rows = read.map(_._1)
      val counters = ScanTaskCounters.total()
      read.foreach(r => counters.add(r._2))
      val ordered = order(selected).map { case (i, j) => rows(i)(j) }
      new IndexTables4SparkDriverScan(
        ordered,
        plan.readSchema,
        s"${IndexTables4SparkScan.pushed(in, plan, None)}, AnsweredOnDriver: true " +
          s"(${ordered.size} rows), Splits: ${selected.size}/${in.files.size}, Tasks: 0",
        in.pruning ++ counters.values
      )
    } else
      IndexTables4SparkScan.plan(in.copy(selected = Some(selected), scored = plan.scoring), None)
  }
}

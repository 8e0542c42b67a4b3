package io.indextables.spark.read

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.connector.read.PartitionReader
import org.apache.spark.unsafe.types.UTF8String

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.metrics.ScanTaskCounters
import io.indextables.spark.schema.PartitionValues
import io.indextables.spark.storage.SplitFileGate
import io.indextables.tantivy4java.split.{SplitMatchAllQuery, SplitParsedQuery, SplitSearcher}

/**
 * Reads one split: runs the pushed query once (with the split's own document count as the
 * limit, so every match comes back; with no query on a one-segment split, takes every document
 * number without searching, see [[SplitSearchEngine.singleSegmentDocs]]), keeps the hits as
 * (segment, doc) numbers in index order (freeing each native address at once), less the docs
 * its deletion vector deletes, then fetches the matching documents in batches of
 * `batchSize` per native call and decodes them straight into rows. A split of a pushed top-k is
 * not searched: its winners are read, in their order. `_score` comes from the native ranker
 * ([[Ranking]]). Runs on an executor, on one
 * thread; borrows its searcher (see [[SplitSearchEngine.borrow]]) and gives it back in `close`.
 */
final class IndexTables4SparkPartitionReader(
    plan: ReadPlan,
    split: SplitInputPartition,
    counters: ScanTaskCounters)
    extends PartitionReader[InternalRow] {

  // From the split's local copy to the searcher's return: FLUSH DISK CACHE waits for it.
  private val use = SplitFileGate.enter()
  private val checked = use.guard(SplitSearchEngine.check(plan, split))
  private val searcher: SplitSearcher = use.guard(SplitSearchEngine.borrow(checked, split, plan))
  // False once a native call failed: the searcher is then closed, not kept for later reads.
  private var healthy = true
  private val variant = plan.variants(split.variant)
  private val outputOrdinals =
    variant.dataFields.map(f => plan.readSchema.fieldIndex(f.name)).toArray
  private val fieldNames = variant.dataFields.map(_.name).toArray
  private val decoder = new ProjectedDocDecoder(variant.dataFields.zip(outputOrdinals))
  private val partitionSlots: Seq[(Int, Any)] = plan.partitionSchema.fields.toSeq.collect {
    case f if plan.readSchema.fieldNames.contains(f.name) =>
      val raw = split.partitionValues.getOrElse(f.name, null)
      (plan.readSchema.fieldIndex(f.name), PartitionValues.decode(raw, f.dataType, plan.timeZone))
  } ++ metadataSlot(MetadataColumns.Split).map(_ -> UTF8String.fromString(split.path))
  // Where each row's doc id goes, when the scan reads `_doc`.
  private val docSlot = metadataSlot(MetadataColumns.Doc)

  private def metadataSlot(name: String): Option[Int] =
    if (plan.metadataColumns.contains(name)) Some(plan.readSchema.fieldIndex(name)) else None

  // Where each row's `_score` goes, when the scan reads it.
  private val scoreSlot = metadataSlot(MetadataColumns.Score)

  private val (segments, docIds) = use.guard(split.ranked match {
    case Some(r) => (r.addresses.map(a => (a >>> 32).toInt), r.addresses.map(_.toInt))
    case None => search()
  })
  counters.splitsSearched += 1
  counters.documentsMatched += docIds.length
  // The rows' scores (NaN: NULL), when the scan reads `_score`.
  private lazy val scores: Array[Float] = split.ranked.map(_.scores).getOrElse(scoresOfHits())
  private var position = 0

  /** How many rows this reader returns: its split's matches (up to the plan's limit). */
  def rowCount: Int = docIds.length

  /** Every row this reader returns, as addresses (segment << 32 | doc), with its score. */
  private[read] def scoredHits(): RankedHits = RankedHits(
    Array.tabulate(docIds.length)(i =>
      (segments(i).toLong << 32) | (docIds(i).toLong & 0xffffffffL)),
    scores)

  /**
   * Each hit's BM25 score for the split variant's text clauses, with the scan's table-wide
   * statistics; NaN where no text clause matched the hit, or the read has none.
   */
  private def scoresOfHits(): Array[Float] =
    (variant.scoreQueryJson, plan.scoring) match {
      case (Some(q), Some(stats)) if docIds.nonEmpty =>
        val scored = counters.timed(RankedSplits.withIndex(plan, split)(i =>
          RankedSplits.ranked(split, q)(i.scoreAll(q, Ranking.statisticsOf(stats)))))
        Ranking.lookup(scored.addresses, scored.scores, segments, docIds)
      case _ => Array.fill(docIds.length)(Float.NaN)
    }

  private var buffer: Iterator[InternalRow] = Iterator.empty
  private var current: InternalRow = _

  private def search(): (Array[Int], Array[Int]) = {
    val json = if (split.hasLongTokens) variant.queryWithoutTokensJson else variant.queryAstJson
    val query = json.map(new SplitParsedQuery(_)).getOrElse(new SplitMatchAllQuery())
    val docs = split.numRecords.getOrElse(Int.MaxValue.toLong)
    val limit = math.min(plan.limit.map(_.toLong).getOrElse(docs), docs).min(Int.MaxValue).toInt
    if (limit <= 0) return (Array.empty, Array.empty)
    val deleted = DeletionVectors.of(plan, split)
    // Every document of a one-segment split: its numbers are known, and tantivy4java's hit list
    // costs far more per document than fetching the document itself.
    if (json.isEmpty) SplitSearchEngine.singleSegmentDocs(checked, split).foreach { n =>
      val ids = deleted match {
        case Some(d) => DeletionVectors.survivingOf(n, d, limit)
        case None => Array.tabulate(math.min(limit.toLong, n).toInt)(identity)
      }
      return (new Array[Int](ids.length), ids)
    }
    // Deleted docs may be among the first hits: enough more that `limit` survive.
    val wanted = deleted.fold(limit.toLong)(d => limit + d.getLongCardinality)
      .min(docs).min(Int.MaxValue).toInt
    val result =
      try counters.timed(searcher.search(LeafCacheBypass.query(plan, query), wanted))
      catch {
        case e: Exception =>
          healthy = false
          throw IndexTablesErrors.searchFailed(split.path, json.getOrElse("match_all"), e)
      }
    val (segments, ids) =
      try NativeDocs.hitIds(result)
      finally result.close()
    deleted.fold((segments, ids))(d => DeletionVectors.surviving(split, d, segments, ids, limit))
  }

  override def next(): Boolean = {
    while (!buffer.hasNext && position < docIds.length) fetchBatch()
    if (buffer.hasNext) { current = buffer.next(); counters.rowsReturned += 1; true }
    else false
  }

  override def get(): InternalRow = current

  private def fetchBatch(): Unit = {
    val start = position
    val end = math.min(position + plan.batchSize, docIds.length)
    val segs = java.util.Arrays.copyOfRange(segments, position, end)
    val ids = java.util.Arrays.copyOfRange(docIds, position, end)
    position = end
    val rows: Array[InternalRow] = if (fieldNames.isEmpty) {
      Array.fill[InternalRow](ids.length)(newRow())
    } else {
      val bytes =
        try counters.timed(NativeDocs.projected(searcher, segs, ids, fieldNames, split.companion))
        catch {
          case e: Exception =>
            healthy = false
            throw IndexTablesErrors.splitReadFailed(split.path, e)
        }
      if (bytes.isEmpty) Array.empty[InternalRow] else decoder.decode(bytes, () => newRow())
    }
    if (rows.length != ids.length) throw IndexTablesErrors.splitReadFailed(
      split.path,
      new IllegalStateException(s"asked for ${ids.length} documents, got ${rows.length}"))
    docSlot.foreach { slot =>
      var k = 0
      while (k < rows.length) {
        if (segs(k) != 0) throw IndexTablesErrors.splitNotSingleSegment(split.path)
        rows(k).update(slot, ids(k).toLong)
        k += 1
      }
    }
    scoreSlot.foreach { slot =>
      var k = 0
      while (k < rows.length) {
        val score = scores(start + k)
        if (score.isNaN) rows(k).setNullAt(slot) else rows(k).update(slot, score)
        k += 1
      }
    }
    buffer = rows.iterator
  }

  private def newRow(): GenericInternalRow = {
    val row = new GenericInternalRow(plan.readSchema.length)
    partitionSlots.foreach { case (i, v) => row.update(i, v) }
    row
  }

  override def close(): Unit =
    try {
      if (healthy) SplitSearchEngine.giveBack(checked, split, plan, searcher)
      else searcher.close()
    } finally {
      use.end()
      counters.settle()
    }
}

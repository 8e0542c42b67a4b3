package io.indextables.spark.read

import scala.collection.JavaConverters._

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.{Cast, GenericInternalRow, Literal}
import org.apache.spark.sql.connector.read.PartitionReader
import org.apache.spark.sql.types.StringType

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.search.SplitSearchEngine
import io.indextables.tantivy4java.core.DocAddress
import io.indextables.tantivy4java.split.{SplitMatchAllQuery, SplitParsedQuery, SplitSearcher}

/**
 * Reads one split: runs the pushed query once (with the split's own document count as the
 * limit, so every match comes back), then fetches the matching documents in batches of
 * `batchSize` per native call and converts them to rows. Runs on an executor, on one thread;
 * owns its searcher and the hits' native addresses, and frees them in `close`.
 */
final class IndexTables4SparkPartitionReader(plan: ReadPlan, split: SplitInputPartition)
  extends PartitionReader[InternalRow] {

  private val searcher: SplitSearcher = SplitSearchEngine.open(plan, split)
  private val outputOrdinals = plan.dataFields.map(f => plan.readSchema.fieldIndex(f.name)).toArray
  private val fieldNames = plan.dataFields.map(_.name).toArray
  private val partitionSlots: Seq[(Int, Any)] = plan.partitionSchema.fields.toSeq.collect {
    case f if plan.readSchema.fieldNames.contains(f.name) =>
      val raw = split.partitionValues.getOrElse(f.name, null)
      val typed = if (raw == null) null
        else Cast(Literal.create(raw, StringType), f.dataType, Some(plan.timeZone)).eval()
      (plan.readSchema.fieldIndex(f.name), typed)
  }

  private val hits: Array[DocAddress] = search()
  private var position = 0
  private var buffer: Iterator[InternalRow] = Iterator.empty
  private var current: InternalRow = _

  private def search(): Array[DocAddress] = {
    val json = if (split.hasLongTokens) plan.queryWithoutTokensJson else plan.queryAstJson
    val query = json.map(new SplitParsedQuery(_)).getOrElse(new SplitMatchAllQuery())
    val docs = split.numRecords.getOrElse(Int.MaxValue.toLong)
    val limit = math.min(plan.limit.map(_.toLong).getOrElse(docs), docs).min(Int.MaxValue).toInt
    if (limit <= 0) return Array.empty
    val result = try searcher.search(query, limit)
      catch {
        case e: Exception =>
          throw IndexTablesErrors.searchFailed(split.path, json.getOrElse("match_all"), e)
      }
    try result.getHits.asScala.map(_.getDocAddress).toArray
    finally result.close()
  }

  override def next(): Boolean = {
    while (!buffer.hasNext && position < hits.length) fetchBatch()
    if (buffer.hasNext) { current = buffer.next(); true } else false
  }

  override def get(): InternalRow = current

  private def fetchBatch(): Unit = {
    val end = math.min(position + plan.batchSize, hits.length)
    val batch = java.util.Arrays.copyOfRange(hits, position, end)
    position = end
    val rows = if (fieldNames.isEmpty) {
      batch.map(_ => newRow())
    } else {
      val docs = try searcher.docBatchProjected(batch, fieldNames: _*).asScala
        catch { case e: Exception => throw IndexTablesErrors.splitReadFailed(split.path, e) }
      docs.map { d =>
        val row = newRow()
        var i = 0
        while (i < fieldNames.length) {
          val f = plan.dataFields(i)
          val values = d.get(f.name)
          val v = if (values == null || values.isEmpty) null else values.get(0)
          row.update(outputOrdinals(i), DocumentValues.toCatalyst(v, f.dataType))
          i += 1
        }
        row
      }.toArray
    }
    batch.foreach(_.close())
    buffer = rows.iterator
  }

  private def newRow(): GenericInternalRow = {
    val row = new GenericInternalRow(plan.readSchema.length)
    partitionSlots.foreach { case (i, v) => row.update(i, v) }
    row
  }

  override def close(): Unit = {
    try hits.drop(position).foreach(_.close())
    finally searcher.close()
  }
}

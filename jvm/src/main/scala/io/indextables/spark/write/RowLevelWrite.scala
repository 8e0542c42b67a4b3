package io.indextables.spark.write

import java.io.{ByteArrayOutputStream, DataOutputStream}
import java.nio.ByteBuffer

import scala.collection.mutable

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.write.{DeltaBatchWrite, DeltaWrite, DeltaWriteBuilder, DeltaWriter, DeltaWriterFactory, PhysicalWriteInfo, WriterCommitMessage}
import org.roaringbitmap.RoaringBitmap

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.transaction.{Snapshot, TransactionLog}

/**
 * The write half of a DELETE, UPDATE or MERGE (Spark's `WriteDelta` over
 * [[io.indextables.spark.core]]'s row-level operation): each task turns the row ids Spark hands
 * it (`_split`, `_doc`) of deleted and updated rows into per-split bitmaps of deleted docs, and
 * writes the updated and inserted rows as new splits through the table's own writer (`rows`, an
 * append's plan; both layouts); the driver commits both in one version through
 * [[DeletionCommit]], against the snapshot `base` the operation's scan read. No split is
 * rewritten; a failed commit deletes the new splits.
 */
final class RowLevelWrite(
    log: TransactionLog,
    base: Snapshot,
    tableName: String,
    operation: String,
    parameters: Map[String, String],
    rows: Option[WritePlan] = None)
    extends DeltaWriteBuilder with DeltaWrite with DeltaBatchWrite {

  @volatile private var outcome: Option[DeletionCommit.Result] = None

  /** What the commit did, once it ran. */
  def result: Option[DeletionCommit.Result] = outcome

  override def build(): DeltaWrite = this
  override def description(): String = s"IndexTablesRowLevelWrite($tableName, $operation)"
  override def toBatch: DeltaBatchWrite = this

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DeltaWriterFactory =
    new RowLevelWriterFactory(operation, rows)

  override def useCommitCoordinator(): Boolean = true

  override def commit(messages: Array[WriterCommitMessage]): Unit = {
    val deletes = mutable.HashMap.empty[String, RoaringBitmap]
    val parts = messages.collect { case m: RowLevelCommitMessage => m }
    val added = parts.flatMap(_.inserted.toSeq.flatMap(_.adds)).toSeq
    val updated = parts.map(_.updated).sum
    val written = parts.map(_.inserted.map(_.rows).getOrElse(0L)).sum
    messages.foreach {
      case m: RowLevelCommitMessage =>
        m.deletes.foreach { case (split, bytes) =>
          val docs = RowLevelWrite.decode(bytes)
          deletes.get(split) match {
            case Some(b) => b.or(docs)
            case None => deletes(split) = docs
          }
        }
      case other => throw IndexTablesErrors.internalError(s"unexpected commit message $other")
    }
    try {
      outcome = Some(DeletionCommit.commit(
        log,
        base,
        tableName,
        operation,
        parameters,
        deletes.toMap,
        added,
        updated,
        written - updated))
    } catch {
      case e: Throwable =>
        abort(messages)
        throw e
    }
  }

  /** The splits the tasks wrote for updated and inserted rows go; deletions wrote nothing. */
  override def abort(messages: Array[WriterCommitMessage]): Unit = rows.foreach { plan =>
    val uploader = new SplitUploader(plan)
    messages.collect { case m: RowLevelCommitMessage => m }
      .flatMap(_.inserted.toSeq.flatMap(_.adds)).foreach(uploader.deleteFiles)
  }
}

object RowLevelWrite {
  def encode(b: RoaringBitmap): Array[Byte] = {
    b.runOptimize()
    val out = new ByteArrayOutputStream(b.serializedSizeInBytes())
    b.serialize(new DataOutputStream(out))
    out.toByteArray
  }

  def decode(bytes: Array[Byte]): RoaringBitmap = {
    val b = new RoaringBitmap()
    b.deserialize(ByteBuffer.wrap(bytes))
    b
  }
}

/**
 * One task's deleted docs, by split path (portable Roaring bytes), how many of them were
 * updated, and the splits it wrote for updated and inserted rows.
 */
final case class RowLevelCommitMessage(
    deletes: Map[String, Array[Byte]],
    updated: Long,
    inserted: Option[IndexTablesCommitMessage])
    extends WriterCommitMessage

final class RowLevelWriterFactory(operation: String, rows: Option[WritePlan])
    extends DeltaWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DeltaWriter[InternalRow] =
    new RowLevelWriter(
      operation,
      rows.map(p => () => new IndexTables4SparkDataWriter(p, partitionId, taskId)))
}

/**
 * One task of a row-level write: the row ids (`_split`, `_doc`) of deleted and updated rows
 * become bitmaps, and updated and inserted rows go to the table's writer, opened on the first.
 */
final class RowLevelWriter(operation: String, openWriter: Option[() => IndexTables4SparkDataWriter])
    extends DeltaWriter[InternalRow] {
  private val deleted = mutable.HashMap.empty[String, RoaringBitmap]
  private var updates = 0L
  private var writer: Option[IndexTables4SparkDataWriter] = None

  private def writeRow(row: InternalRow, what: String): Unit = {
    if (writer.isEmpty) writer = Some(openWriter.getOrElse(
      throw IndexTablesErrors.internalError(s"a $operation write was asked to $what a row"))())
    writer.get.write(row)
  }

  override def delete(metadata: InternalRow, id: InternalRow): Unit = {
    val split = id.getUTF8String(0).toString
    val doc = id.getLong(1)
    if (doc < 0 || doc > 0xffffffffL) {
      throw IndexTablesErrors.internalError(s"$operation got doc id $doc of split $split")
    }
    deleted.getOrElseUpdate(split, new RoaringBitmap()).add(doc.toInt)
  }

  override def update(metadata: InternalRow, id: InternalRow, row: InternalRow): Unit = {
    delete(metadata, id)
    writeRow(row, "update")
    updates += 1
  }

  override def insert(row: InternalRow): Unit = writeRow(row, "insert")

  override def commit(): WriterCommitMessage = {
    val inserted = writer.map(_.commit() match {
      case m: IndexTablesCommitMessage => m
      case other => throw IndexTablesErrors.internalError(s"unexpected commit message $other")
    })
    RowLevelCommitMessage(
      deleted.map { case (s, b) => s -> RowLevelWrite.encode(b) }.toMap,
      updates,
      inserted)
  }

  override def abort(): Unit = {
    deleted.clear()
    writer.foreach(_.abort())
  }

  override def close(): Unit = writer.foreach(_.close())
}

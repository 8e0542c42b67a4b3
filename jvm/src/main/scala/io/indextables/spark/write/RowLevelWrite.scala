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
 * The write half of a DELETE (Spark's `WriteDelta` over [[io.indextables.spark.core]]'s
 * row-level operation): each task turns the row ids Spark hands it (`_split`, `_doc`) into
 * per-split bitmaps of deleted docs, and the driver commits them in one version through
 * [[DeletionCommit]], against the snapshot `base` the operation's scan read. No split is
 * rewritten and nothing is shuffled.
 */
final class RowLevelWrite(
    log: TransactionLog,
    base: Snapshot,
    tableName: String,
    operation: String,
    parameters: Map[String, String])
    extends DeltaWriteBuilder with DeltaWrite with DeltaBatchWrite {

  @volatile private var outcome: Option[DeletionCommit.Result] = None

  /** What the commit did, once it ran. */
  def result: Option[DeletionCommit.Result] = outcome

  override def build(): DeltaWrite = this
  override def description(): String = s"IndexTablesRowLevelWrite($tableName, $operation)"
  override def toBatch: DeltaBatchWrite = this

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DeltaWriterFactory =
    new RowLevelWriterFactory(operation)

  override def commit(messages: Array[WriterCommitMessage]): Unit = {
    val deletes = mutable.HashMap.empty[String, RoaringBitmap]
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
    outcome =
      Some(DeletionCommit.commit(log, base, tableName, operation, parameters, deletes.toMap))
  }

  // Tasks wrote nothing but their messages: nothing to clean up.
  override def abort(messages: Array[WriterCommitMessage]): Unit = ()
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

/** One task's deleted docs, by split path (portable Roaring bytes). */
final case class RowLevelCommitMessage(deletes: Map[String, Array[Byte]])
    extends WriterCommitMessage

final class RowLevelWriterFactory(operation: String) extends DeltaWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DeltaWriter[InternalRow] =
    new RowLevelWriter(operation)
}

/** Collects the row ids of one task's deleted rows: row id = (`_split`, `_doc`). */
final class RowLevelWriter(operation: String) extends DeltaWriter[InternalRow] {
  private val deleted = mutable.HashMap.empty[String, RoaringBitmap]

  override def delete(metadata: InternalRow, id: InternalRow): Unit = {
    val split = id.getUTF8String(0).toString
    val doc = id.getLong(1)
    if (doc < 0 || doc > 0xffffffffL) {
      throw IndexTablesErrors.internalError(s"$operation got doc id $doc of split $split")
    }
    deleted.getOrElseUpdate(split, new RoaringBitmap()).add(doc.toInt)
  }

  override def update(metadata: InternalRow, id: InternalRow, row: InternalRow): Unit =
    throw IndexTablesErrors.rowLevelCommandUnsupported(operation, "UPDATE")

  override def insert(row: InternalRow): Unit =
    throw IndexTablesErrors.rowLevelCommandUnsupported(operation, "INSERT")

  override def commit(): WriterCommitMessage =
    RowLevelCommitMessage(deleted.map { case (s, b) => s -> RowLevelWrite.encode(b) }.toMap)

  override def abort(): Unit = deleted.clear()
  override def close(): Unit = ()
}

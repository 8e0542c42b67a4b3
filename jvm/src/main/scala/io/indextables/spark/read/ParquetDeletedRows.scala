package io.indextables.spark.read

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.connector.read.PartitionReader
import org.apache.spark.sql.types.Decimal
import org.apache.spark.sql.vectorized.{ColumnVector, ColumnarArray, ColumnarBatch, ColumnarMap}
import org.apache.spark.unsafe.types.UTF8String
import org.roaringbitmap.RoaringBitmap

/**
 * The Parquet route's reads of a companion split with deleted rows. The split's docs are in
 * row order (`companionDocsInRowOrder`), so its deletion vector names row positions: doc d is
 * row d of the split's files read one after the other. Each file is read whole and unfiltered
 * (no row group skipped), so the reader's n-th row is row n of the file; `first` is the doc
 * number of the file's row 0. Owned by one task thread.
 */
private[read] object ParquetDeletedRows {

  /** The rows of `rows` (one file) whose positions `deleted` does not hold. */
  final class Rows(rows: PartitionReader[InternalRow], deleted: RoaringBitmap, first: Long)
      extends PartitionReader[InternalRow]
      with Counted {
    private var position = first - 1

    override def next(): Boolean = {
      while (rows.next()) {
        position += 1
        if (!deleted.contains(position.toInt)) return true
      }
      false
    }
    override def get(): InternalRow = rows.get()
    override def close(): Unit = rows.close()
    override def read: Long = position + 1 - first
  }

  /**
   * The batches of `batches` (one file) less the rows `deleted` holds: a batch with none keeps
   * its vectors; one with some is a view of its kept rows ([[Selected]]), copying nothing; one
   * with only deleted rows is skipped.
   */
  final class Batches(
      batches: PartitionReader[ColumnarBatch],
      deleted: RoaringBitmap,
      first: Long) extends PartitionReader[ColumnarBatch] with Counted {
    private var start = first
    private var current: ColumnarBatch = _

    override def next(): Boolean = {
      while (batches.next()) {
        val batch = batches.get()
        val n = batch.numRows()
        val from = start
        start += n
        val gone = deleted.rangeCardinality(from, from + n).toInt
        if (gone == 0) { current = batch; return true }
        if (gone < n) {
          val kept = new Array[Int](n - gone)
          var i = 0
          var k = 0
          while (i < n) {
            if (!deleted.contains((from + i).toInt)) { kept(k) = i; k += 1 }
            i += 1
          }
          val columns = (0 until batch.numCols()).map(c => new Selected(batch.column(c), kept))
          current = new ColumnarBatch(columns.toArray[ColumnVector], kept.length)
          return true
        }
      }
      false
    }
    override def get(): ColumnarBatch = current
    override def close(): Unit = batches.close()
    override def read: Long = start - first
  }

  /** A reader that knows how many rows of its file it has read, deleted ones included. */
  trait Counted {
    def read: Long
  }

  /**
   * The rows `rows` of `base`, in that order, as a column: a view, valid while `base` holds
   * its batch. Structs and intervals read through [[getChild]], which views the child alike.
   */
  final class Selected(base: ColumnVector, rows: Array[Int]) extends ColumnVector(base.dataType()) {
    override def close(): Unit = ()
    override def hasNull(): Boolean = base.hasNull()
    override def numNulls(): Int = {
      var n = 0
      rows.foreach(r => if (base.isNullAt(r)) n += 1)
      n
    }
    override def isNullAt(rowId: Int): Boolean = base.isNullAt(rows(rowId))
    override def getBoolean(rowId: Int): Boolean = base.getBoolean(rows(rowId))
    override def getByte(rowId: Int): Byte = base.getByte(rows(rowId))
    override def getShort(rowId: Int): Short = base.getShort(rows(rowId))
    override def getInt(rowId: Int): Int = base.getInt(rows(rowId))
    override def getLong(rowId: Int): Long = base.getLong(rows(rowId))
    override def getFloat(rowId: Int): Float = base.getFloat(rows(rowId))
    override def getDouble(rowId: Int): Double = base.getDouble(rows(rowId))
    override def getArray(rowId: Int): ColumnarArray = base.getArray(rows(rowId))
    override def getMap(ordinal: Int): ColumnarMap = base.getMap(rows(ordinal))
    override def getDecimal(rowId: Int, precision: Int, scale: Int): Decimal =
      base.getDecimal(rows(rowId), precision, scale)
    override def getUTF8String(rowId: Int): UTF8String = base.getUTF8String(rows(rowId))
    override def getBinary(rowId: Int): Array[Byte] = base.getBinary(rows(rowId))
    private val children = scala.collection.mutable.Map[Int, ColumnVector]()
    override def getChild(ordinal: Int): ColumnVector =
      children.getOrElseUpdate(ordinal, new Selected(base.getChild(ordinal), rows))
  }
}

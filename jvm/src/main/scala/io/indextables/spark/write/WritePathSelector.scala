package io.indextables.spark.write

import org.apache.spark.sql.types.{ArrayType, DataType, MapType, StringType, StructType}

import io.indextables.spark.schema.{IndexKind, TableIndexSchema}

/** Which native API a write task indexes through. */
sealed trait WritePath
object WritePath {

  /** tantivy4java's Arrow C data interface: beginSplitFromArrow / addArrowBatch / finishAllSplits. */
  case object ArrowFfi extends WritePath

  /** tantivy4java's batch-document API: IndexWriter + BatchDocumentBuilder, then a split. */
  case object BatchDocuments extends WritePath
}

/**
 * The one place that decides the write path. tantivy4java 0.31.0's Arrow FFI path takes no field
 * configuration: it indexes every string with the `raw` tokenizer, makes every field fast and
 * stored, and does not store list columns. A table that needs anything else is written through
 * the batch-document API instead. When the native library accepts field configuration, this
 * object is the only thing to change.
 */
object WritePathSelector {

  final case class Decision(path: WritePath, reason: String)

  def select(schema: TableIndexSchema): Decision = {
    val needsDocuments = schema.fields.collectFirst {
      case f if f.kind == IndexKind.Text =>
        s"column '${f.name}' is tokenized text; the Arrow FFI path indexes strings raw only"
      case f if f.kind == IndexKind.Json && f.dataType == StringType =>
        s"column '${f.name}' is a JSON string; the Arrow FFI path indexes strings raw only"
      case f if containsArray(f.dataType) =>
        s"column '${f.name}' holds an array; the Arrow FFI path does not store lists"
      case f if containsMap(f.dataType) =>
        s"column '${f.name}' holds a map; the Arrow FFI path does not take maps"
      case f if f.kind == IndexKind.Ip =>
        s"column '${f.name}' is an IP address; the Arrow FFI path indexes strings raw only"
      // JSON fast-ness is not asked for (see TableIndexSchema); the Arrow FFI path's own differs.
      case f
          if !(f.indexed && f.stored &&
            (f.kind == IndexKind.Json || f.fast == TableIndexSchema.defaultFast(f.kind))) =>
        s"column '${f.name}' is not indexed, stored and fast as by default; the Arrow FFI " +
          "path makes every field all three"
    }
    needsDocuments match {
      case Some(reason) => Decision(WritePath.BatchDocuments, reason)
      case None =>
        Decision(WritePath.ArrowFfi, "every column is indexed as the Arrow FFI path does")
    }
  }

  private def containsMap(dt: DataType): Boolean = dt match {
    case _: MapType => true
    case s: StructType => s.fields.exists(f => containsMap(f.dataType))
    case a: ArrayType => containsMap(a.elementType)
    case _ => false
  }

  private def containsArray(dt: DataType): Boolean = dt match {
    case _: ArrayType => true
    case s: StructType => s.fields.exists(f => containsArray(f.dataType))
    case _ => false
  }
}

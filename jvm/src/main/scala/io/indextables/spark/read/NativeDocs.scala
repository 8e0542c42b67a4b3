package io.indextables.spark.read

import java.lang.reflect.{Field, Method}

import scala.util.Try

import io.indextables.spark.IndexTablesErrors
import io.indextables.tantivy4java.result.SearchResult
import io.indextables.tantivy4java.split.SplitSearcher

/**
 * Document retrieval by plain (segment, doc) numbers. tantivy4java 0.31.0 hands every hit over
 * as a `DocAddress` holding a native pointer, and its public batch retrieval re-reads both
 * numbers from each address through JNI, then parses the result into a HashMap per document.
 * Here each address is read once and freed at once, and the batch comes back as the raw
 * document-batch bytes for [[io.indextables.spark.read.ProjectedDocDecoder]], through the
 * searcher's field-filtering bulk entry point (`docsBulkNativeWithFields`, the one its public
 * `docBatch(addresses, fields)` calls): only the wanted fields are serialized, where the projected
 * entry point (`nativeDocBatchProjected`) returns every stored field of a standard split. That
 * entry point is private to tantivy4java, so it is found by reflection; a build without it fails
 * the first read with an error that says so (and NativeDocsSuite fails first). Stateless and
 * thread-safe.
 */
object NativeDocs {

  private val EntryPoint = "docsBulkNativeWithFields"

  /** The same for companion splits: the rows come from their Parquet files. */
  private val ParquetEntryPoint = "nativeDocBatchProjected"

  // Looked up once per JVM; called once per batch of documents, so reflection costs nothing.
  private lazy val projectedHandle: Option[(Field, Method)] = handle(EntryPoint)
  private lazy val parquetHandle: Option[(Field, Method)] = handle(ParquetEntryPoint)

  private def handle(entryPoint: String): Option[(Field, Method)] = Try {
    val c = classOf[SplitSearcher]
    val ptr = c.getDeclaredField("nativePtr")
    val m = c.getDeclaredMethod(
      entryPoint,
      classOf[Long],
      classOf[Array[Int]],
      classOf[Array[Int]],
      classOf[Array[String]])
    ptr.setAccessible(true)
    m.setAccessible(true)
    (ptr, m)
  }.toOption.filter { case (ptr, m) =>
    // The library's shape, not input: another build's signature turns this path off.
    ptr.getType == classOf[Long] && m.getReturnType == classOf[Array[Byte]]
  }

  /** Whether this tantivy4java build has the projected entry point. */
  def hasProjectedEntryPoint: Boolean = projectedHandle.isDefined

  /**
   * The (segment, doc) numbers of every hit of `result`, sorted in index order (so batches read
   * the document store forwards); every hit's native address is freed, also on failure.
   */
  def hitIds(result: SearchResult): (Array[Int], Array[Int]) = {
    val hits = result.getHits
    val n = hits.size
    val packed = new Array[Long](n)
    var failure: Throwable = null
    var i = 0
    while (i < n) {
      val addr = hits.get(i).getDocAddress
      try {
        if (failure == null)
          packed(i) = (addr.getSegmentOrd.toLong << 32) | (addr.getDoc.toLong & 0xffffffffL)
      } catch { case t: Throwable => failure = t }
      finally addr.close()
      i += 1
    }
    if (failure != null) throw failure
    java.util.Arrays.sort(packed)
    (packed.map(p => (p >>> 32).toInt), packed.map(_.toInt))
  }

  /** The stored `fields` of the given documents, as one document-batch buffer ("TANT"). */
  def projected(
      searcher: SplitSearcher,
      segments: Array[Int],
      docs: Array[Int],
      fields: Array[String],
      companion: Boolean = false): Array[Byte] =
    if (docs.isEmpty) Array.empty
    else (if (companion) parquetHandle else projectedHandle) match {
      case Some((ptr, call)) =>
        val bytes =
          try
            call.invoke(null, java.lang.Long.valueOf(ptr.getLong(searcher)), segments, docs, fields)
              .asInstanceOf[Array[Byte]]
          catch { case e: java.lang.reflect.InvocationTargetException => throw e.getCause }
        if (bytes == null) Array.empty else bytes
      case None => throw IndexTablesErrors.nativeLibraryMismatch(
          s"it has no SplitSearcher.$EntryPoint(long, int[], int[], String[]): byte[], through " +
            "which IndexTables reads documents (tantivy4java 0.31.0 has it)")
    }
}

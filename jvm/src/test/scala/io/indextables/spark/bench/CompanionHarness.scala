package io.indextables.spark.bench

import java.io.{File, PrintWriter}
import java.lang.management.ManagementFactory
import java.util.Locale
import java.util.concurrent.{Callable, Executors, TimeUnit}

import scala.jdk.CollectionConverters._
import scala.collection.mutable.ArrayBuffer

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ObjectNode
import org.apache.arrow.c.{ArrowArray, ArrowSchema, Data}
import org.apache.arrow.memory.{BufferAllocator, RootAllocator}
import org.apache.arrow.vector.FieldVector

import io.indextables.spark.read.LeafCacheBypass
import io.indextables.tantivy4java.core.DocAddress
import io.indextables.tantivy4java.split._
import io.indextables.tantivy4java.split.merge.QuickwitSplit

/**
 * The Parquet companion layout of tantivy4java, measured on the benchmark suite's table
 * (tests/benchmarks) without Spark: an index-only split built beside each Parquet file that
 * Spark wrote, whose documents are served from that Parquet file.
 *
 *  - ingest: QuickwitSplit.createFromParquet, one split per Parquet file, the files processed on
 *    a pool of `threads` as Spark tasks would be; `message` is indexed as tokenized text (the
 *    "default" tokenizer, through the config's tokenizer overrides) and the other strings raw
 *    (the companion default). The wall time of a whole round is reported (the Parquet write
 *    that produced the files is not included: time it apart and add it), with the split bytes
 *    against the Parquet bytes they index.
 *  - queries: a rare term on `message`, a phrase on `message`, and `level = 'ERROR' AND host =
 *    <host>`, run on every split (one task per split on the same pool) through SplitSearcher,
 *    each search made new (LeafCacheBypass), so no run is answered from the cache. Every hit is
 *    fetched with every column from the Parquet files through both companion retrieval paths:
 *    docBatchProjected (the TANT byte format the product's reader decodes) and
 *    docBatchArrowFfi (Arrow columns through the C data interface). Each fetched row is checked
 *    against the query, and the hit counts must be non-zero and the same in every run.
 *
 * Usage:
 * {{{
 * CompanionHarness --parquet <dir of *.parquet written by Spark> --work <dir> [--out <json>]
 *   [--threads 2] [--runs 5] [--warmup 1] [--read-batch 2048] [--heap 256000000]
 *   [--fast-field-mode DISABLED|HYBRID|PARQUET_ONLY] [--string-fingerprints true|false]
 *   [--host node-01.dc2.example.com] [--rare quarantined] [--phrase "closed for"]
 * }}}
 * `--string-fingerprints false` leaves out the hidden `_phash_<field>` u64 fast fields that the
 * companion indexing adds by default for every string column (for aggregations).
 * The Parquet columns are the suite's: ts, level, component, host, latency_ms, message. The JSON
 * result is printed on stdout, and written to `--out` when given. The run needs the Arrow
 * classes of Spark's jars and, on Java 17, `--add-opens=java.base/java.nio=ALL-UNNAMED`.
 */
object CompanionHarness {
  private val mapper = new ObjectMapper()

  /** The benchmark table's columns, all retrieved for every hit. */
  val Columns: Array[String] = Array("ts", "level", "component", "host", "latency_ms", "message")

  /** A query, and the predicate every row it returns must satisfy. */
  final case class Workload(name: String, query: () => SplitQuery, matches: Row => Boolean)

  /** The string values of the columns a predicate reads (null = SQL null). */
  type Row = String => String

  final case class Split(path: String, metadata: QuickwitSplit.SplitMetadata, bytes: Long)

  /** What one fetch returned: hits, non-null values read, rows not matching the query. */
  final case class Fetched(hits: Long, values: Long, mismatched: Long) {
    def +(o: Fetched): Fetched =
      Fetched(hits + o.hits, values + o.values, mismatched + o.mismatched)
  }

  def main(args: Array[String]): Unit = {
    val opts = args.grouped(2).collect { case Array(k, v) => k.stripPrefix("--") -> v }.toMap
    def opt(k: String, d: String) = opts.getOrElse(k, d)
    val parquetDir = new File(opts("parquet")).getAbsoluteFile
    val work = new File(opts("work")).getAbsoluteFile
    val threads = opt("threads", "2").toInt
    val runs = opt("runs", "5").toInt
    val warmup = opt("warmup", "1").toInt
    val readBatch = opt("read-batch", "2048").toInt
    val heap = opt("heap", "256000000").toLong
    val fastFieldMode =
      ParquetCompanionConfig.FastFieldMode.valueOf(opt("fast-field-mode", "DISABLED"))
    val fingerprints = opt("string-fingerprints", "true").toBoolean
    val host = opt("host", "node-01.dc2.example.com")
    val rare = opt("rare", "quarantined")
    val phrase = opt("phrase", "closed for").split(" ").toSeq
    work.mkdirs()

    val files = Option(parquetDir.listFiles()).getOrElse(Array.empty[File])
      .filter(f => f.getName.endsWith(".parquet") && f.length() > 0).sortBy(_.getName).toSeq
    require(files.nonEmpty, s"no *.parquet files in $parquetDir")
    val parquetBytes = files.map(_.length()).sum

    val base = new ParquetCompanionConfig(parquetDir.getPath)
      .withTokenizerOverrides(Map("message" -> "default").asJava)
      .withFastFieldMode(fastFieldMode)
      .withWriterHeapSize(heap)
    // An empty include list: no string fingerprints at all.
    val config = if (fingerprints) base else base.withStringFingerprints()

    val out = mapper.createObjectNode()
    out.put("parquet_dir", parquetDir.getPath).put("parquet_files", files.size)
    out.put("threads", threads).put("fast_field_mode", fastFieldMode.name())
    out.put("string_fingerprints", fingerprints)
    out.put("writer_heap", heap).put("read_batch", readBatch)

    // Ingest: warm-up rounds, then timed rounds, each into a fresh directory; the splits of the
    // last round are searched below.
    val pool = Executors.newFixedThreadPool(threads)
    try {
      val ingestTimes = ArrayBuffer.empty[Double]
      val ingestCpu = ArrayBuffer.empty[Double]
      val docCounts = ArrayBuffer.empty[Long]
      var splits: Seq[Split] = Nil
      (0 until warmup + runs).foreach { round =>
        val dir = new File(work, s"round-$round")
        dir.mkdirs()
        val t0 = System.nanoTime()
        val cpu0 = processCpuNanos()
        val produced = files.map { f =>
          pool.submit(new Callable[Split] {
            override def call(): Split = {
              val path = new File(dir, f.getName.stripSuffix(".parquet") + ".split").getPath
              val md = QuickwitSplit.createFromParquet(List(f.getPath).asJava, path, config)
              Split(path, md, new File(path).length())
            }
          })
        }.map(_.get())
        val secs = (System.nanoTime() - t0) / 1e9
        val cpuSecs = (processCpuNanos() - cpu0) / 1e9
        if (round >= warmup) { ingestTimes += secs; ingestCpu += cpuSecs }
        splits.foreach(s => new File(s.path).delete())
        splits = produced
        docCounts += produced.map(_.metadata.getNumDocs).sum
        System.err.println(f"companion ingest round $round: ${docCounts.last} rows in " +
          f"$secs%.3f s ($cpuSecs%.3f s CPU)")
      }
      require(docCounts.distinct.size == 1, s"rows differ between rounds: $docCounts")
      val splitBytes = splits.map(_.bytes).sum
      val ing = out.putObject("ingest")
      ing.put("rows", docCounts.last).put("splits", splits.size)
      ing.put("split_bytes", splitBytes).put("parquet_bytes", parquetBytes)
      ing.put("split_over_parquet_bytes", splitBytes.toDouble / parquetBytes)
      putTimes(ing, ingestTimes)
      // CPU seconds of the whole process (every thread, native ones too): less sensitive than
      // the wall time to other work on the machine.
      val cpuArr = ing.putArray("cpu_seconds")
      ingestCpu.foreach(c => cpuArr.add(c))
      ing.put("cpu_median_s", median(ingestCpu))
      describe(out.putObject("split"), splits.head, parquetDir.getPath)

      // Queries.
      val level = "ERROR"
      val workloads = Seq(
        Workload(
          s"rare_term:$rare",
          () => new SplitTermQuery("message", rare),
          r => words(r("message")).contains(rare)),
        Workload(
          s"phrase:${phrase.mkString(" ")}",
          () => new SplitPhraseQuery("message", phrase.asJava),
          r => words(r("message")).containsSlice(phrase)),
        Workload(
          s"level=$level AND host=$host",
          () => {
            val q = new SplitBooleanQuery()
            q.addMust(new SplitTermQuery("level", level))
            q.addMust(new SplitTermQuery("host", host))
            q
          },
          r => r("level") == level && r("host") == host
        )
      )
      val allocator = new RootAllocator()
      val failures = ArrayBuffer.empty[String]
      try {
        val qOut = out.putObject("queries")
        workloads.foreach { w =>
          val wOut = qOut.putObject(w.name)
          Seq("tant", "arrow_ffi").foreach { path =>
            val times = ArrayBuffer.empty[Double]
            val fetched = ArrayBuffer.empty[Fetched]
            (0 until warmup + runs).foreach { round =>
              val t0 = System.nanoTime()
              val tasks = splits.map { s =>
                pool.submit(new Callable[Fetched] {
                  override def call(): Fetched =
                    searchSplit(s, parquetDir.getPath, w, path, readBatch, allocator)
                })
              }
              val all = tasks.map(_.get()).reduce(_ + _)
              val secs = (System.nanoTime() - t0) / 1e9
              if (round >= warmup) times += secs
              fetched += all
            }
            val hitCounts = fetched.map(_.hits)
            val mismatched = fetched.map(_.mismatched).sum
            val v = wOut.putObject(path)
            v.put("hits", hitCounts.last).put("values_fetched", fetched.last.values)
            val hitsArr = v.putArray("hits_per_run")
            hitCounts.foreach(h => hitsArr.add(h))
            v.put("rows_not_matching_query", mismatched)
            putTimes(v, times)
            if (hitCounts.last == 0L) failures += s"${w.name}/$path: no hits"
            if (hitCounts.distinct.size != 1) failures += s"${w.name}/$path: hits $hitCounts"
            if (mismatched != 0L) failures += s"${w.name}/$path: $mismatched rows not matching"
            System.err.println(f"companion query ${w.name}/$path: ${hitCounts.last} hits, " +
              f"median ${median(times)}%.4f s")
          }
        }
      } finally allocator.close()
      val f = out.putArray("failures")
      failures.foreach(f.add)
      val json = mapper.writerWithDefaultPrettyPrinter().writeValueAsString(out)
      println(json)
      opts.get("out").foreach { o =>
        val pw = new PrintWriter(new File(o), "UTF-8")
        try pw.print(json)
        finally pw.close()
      }
      if (failures.nonEmpty) sys.exit(1)
    } finally {
      pool.shutdown()
      pool.awaitTermination(1, TimeUnit.MINUTES)
    }
  }

  /** The lower-cased words of a value, as the "default" tokenizer splits them. */
  private def words(s: String): Seq[String] =
    if (s == null) Nil
    else s.toLowerCase(Locale.ROOT).split("[^\\p{L}\\p{N}]+").toSeq.filter(_.nonEmpty)

  private def putTimes(n: ObjectNode, times: collection.Seq[Double]): Unit = {
    val arr = n.putArray("seconds")
    times.foreach(t => arr.add(t))
    n.put("median_s", median(times)).put("min_s", times.min).put("max_s", times.max)
  }

  private def processCpuNanos(): Long =
    ManagementFactory.getOperatingSystemMXBean match {
      case os: com.sun.management.OperatingSystemMXBean => os.getProcessCpuTime
      case _ => -1L
    }

  def median(xs: collection.Seq[Double]): Double = {
    val s = xs.sorted
    if (s.isEmpty) Double.NaN
    else if (s.size % 2 == 1) s(s.size / 2) else (s(s.size / 2 - 1) + s(s.size / 2)) / 2
  }

  // ---- queries ----------------------------------------------------------------------------

  /** The searchers' cache manager (each timed search is made new: LeafCacheBypass). */
  private def cacheManager(tableRoot: String): SplitCacheManager =
    SplitCacheManager.getInstance(new SplitCacheManager.CacheConfig("indextables-companion-bench")
      .withMaxCacheSize(268435456L)
      .withParquetTableRoot(tableRoot))

  private def open(s: Split, tableRoot: String): SplitSearcher =
    // The table root is passed per split too: the cache manager is shared by its cache key,
    // which leaves the table root out.
    cacheManager(tableRoot).createSplitSearcher(s.path, s.metadata, tableRoot)

  /**
   * What the split holds: its column mapping, the bytes of each field's index parts, and one row
   * (the match-all query's first hit) as each retrieval path returns it, with the value types.
   */
  private def describe(n: ObjectNode, s: Split, tableRoot: String): Unit = {
    val searcher = open(s, tableRoot)
    try {
      n.put("has_parquet_companion", searcher.hasParquetCompanion)
      Option(searcher.getColumnMapping).foreach(m =>
        n.set[ObjectNode]("column_mapping", mapper.readTree(m)))
      val sizes = n.putObject("component_bytes")
      searcher.getPerFieldComponentSizes.asScala.toSeq.sortBy(_._1).foreach {
        case (k, v) => sizes.put(k, v.longValue())
      }
      val result = searcher.search(new SplitMatchAllQuery(), 1)
      val first =
        try result.getHits.asScala.map(_.getDocAddress).toArray
        finally result.close()
      val tant = n.putObject("first_row_tant")
      searcher.docBatchProjected(first, Columns: _*).asScala.headOption.foreach { d =>
        Columns.foreach { c =>
          val v = d.get(c)
          val x = if (v == null || v.isEmpty) null else v.get(0)
          tant.put(c, if (x == null) "null" else s"${x.getClass.getSimpleName}: $x")
        }
      }
      val arrow = n.putObject("first_row_arrow")
      val allocator = new RootAllocator()
      try withArrowColumns(searcher, first, allocator) { vectors =>
          Columns.zip(vectors).foreach { case (c, v) =>
            arrow.put(c, s"${v.getField.getType}: ${v.getObject(0)}")
          }
        }
      finally allocator.close()
      first.foreach(_.close())
    } finally searcher.close()
  }

  /** Searches one split and fetches every hit's columns. */
  private def searchSplit(
      s: Split,
      tableRoot: String,
      w: Workload,
      path: String,
      readBatch: Int,
      allocator: BufferAllocator): Fetched = {
    val searcher = open(s, tableRoot)
    try {
      val max = s.metadata.getNumDocs.toInt
      val result = searcher.search(LeafCacheBypass.query(w.query()), max)
      val hits: Array[DocAddress] =
        try result.getHits.asScala.map(_.getDocAddress).toArray
        finally result.close()
      var fetched = Fetched(hits.length.toLong, 0L, 0L)
      var pos = 0
      while (pos < hits.length) {
        val end = math.min(pos + readBatch, hits.length)
        val batch = java.util.Arrays.copyOfRange(hits, pos, end)
        fetched += (path match {
          case "tant" => fetchTant(searcher, batch, w)
          case _ => fetchArrow(searcher, batch, w, allocator)
        })
        pos = end
      }
      hits.foreach(_.close())
      fetched
    } finally searcher.close()
  }

  /** docBatchProjected: every value of every row read, each row checked against the query. */
  private def fetchTant(searcher: SplitSearcher, batch: Array[DocAddress], w: Workload): Fetched = {
    val docs = searcher.docBatchProjected(batch, Columns: _*)
    require(docs.size == batch.length, s"${docs.size} documents for ${batch.length} hits")
    var values = 0L
    var mismatched = 0L
    docs.asScala.foreach { d =>
      Columns.foreach { f =>
        val v = d.get(f); if (v != null && !v.isEmpty) values += 1
      }
      val row: Row = f => {
        val v = d.get(f)
        if (v == null || v.isEmpty || v.get(0) == null) null else v.get(0).toString
      }
      if (!w.matches(row)) mismatched += 1
    }
    Fetched(0L, values, mismatched)
  }

  /** docBatchArrowFfi: one Arrow column per field, imported, read and checked as above. */
  private def fetchArrow(
      searcher: SplitSearcher,
      batch: Array[DocAddress],
      w: Workload,
      allocator: BufferAllocator): Fetched =
    withArrowColumns(searcher, batch, allocator) { vectors =>
      val byName = Columns.zip(vectors).toMap
      var values = 0L
      var mismatched = 0L
      (0 until batch.length).foreach { r =>
        vectors.foreach(v => if (!v.isNull(r)) values += 1)
        val row: Row = f => {
          val v = byName(f).getObject(r)
          if (v == null) null else v.toString
        }
        if (!w.matches(row)) mismatched += 1
      }
      Fetched(0L, values, mismatched)
    }

  /** Every column of `batch` as an imported Arrow vector (in Columns order), closed after `f`. */
  private def withArrowColumns[A](
      searcher: SplitSearcher,
      batch: Array[DocAddress],
      allocator: BufferAllocator)(f: Seq[FieldVector] => A): A = {
    val arrays = Columns.map(_ => ArrowArray.allocateNew(allocator))
    val schemas = Columns.map(_ => ArrowSchema.allocateNew(allocator))
    val vectors = ArrayBuffer.empty[FieldVector]
    try {
      val n = searcher.docBatchArrowFfi(
        batch,
        arrays.map(_.memoryAddress()),
        schemas.map(_.memoryAddress()),
        Columns: _*)
      require(n == batch.length, s"docBatchArrowFfi returned $n rows for ${batch.length} hits")
      Columns.indices.foreach { i =>
        vectors += Data.importVector(allocator, arrays(i), schemas(i), null)
      }
      f(vectors.toSeq)
    } finally {
      vectors.foreach(_.close())
      // Data.importVector closes the structs it imports; the others are released here.
      Columns.indices.drop(vectors.size).foreach { i =>
        try if (arrays(i).snapshot().release != 0L) arrays(i).release()
        finally arrays(i).close()
        try if (schemas(i).snapshot().release != 0L) schemas(i).release()
        finally schemas(i).close()
      }
    }
  }
}

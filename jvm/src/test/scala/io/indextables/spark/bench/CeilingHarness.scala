package io.indextables.spark.bench

import java.io.{BufferedReader, File, FileInputStream, InputStreamReader, PrintWriter}
import java.nio.charset.StandardCharsets
import java.nio.file.Files
import java.time.{LocalDateTime, ZoneOffset}
import java.util.UUID
import java.util.concurrent.{Callable, Executors, TimeUnit}

import scala.jdk.CollectionConverters._
import scala.collection.mutable.ArrayBuffer

import com.fasterxml.jackson.databind.node.ObjectNode
import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.spark.sql.types.{DoubleType, StringType, TimestampType}

import io.indextables.spark.config.IndexTablesConf
import io.indextables.spark.read.{LeafCacheBypass, SplitSearchEngine}
import io.indextables.spark.schema.{IndexKind, IndexedField}
import io.indextables.spark.write.DocumentSplitWriter
import io.indextables.tantivy4java.aggregation.{AggregationResult, CountAggregation, CountResult, TermsAggregation, TermsResult}
import io.indextables.tantivy4java.batch.{BatchDocument, BatchDocumentBuilder}
import io.indextables.tantivy4java.core.{DocAddress, Index, IndexWriter}
import io.indextables.tantivy4java.split._
import io.indextables.tantivy4java.split.merge.QuickwitSplit

/**
 * The raw tantivy4java ceilings of the benchmark suite (tests/benchmarks), without Spark:
 *
 *  - ingest: indexes the rows of JSON-lines files (one file per writer thread, one split per
 *    file, as one Spark task writes one split) through the API the product's write path takes
 *    for a schema with a `text` column: SchemaBuilder/Index/IndexWriter (one indexing thread,
 *    the product's heap), BatchDocumentBuilder batches, a merge into one segment, then
 *    QuickwitSplit.convertIndexFromPath. Only the native work (building documents, indexing,
 *    committing, merging, converting) is timed; JSON parsing is not, so the ceiling is not
 *    diluted by the harness's own input format.
 *  - queries: runs each workload's queries on the produced splits through SplitSearcher
 *    (SplitCacheManager.createSplitSearcher with the footer offsets, as the product opens them,
 *    each request made new so that the leaf-search cache answers none), one task per split on a pool
 *    of `threads`, and fetches the hits' stored fields with `docBatch(addresses, fields)` in
 *    batches (the public call that filters fields natively). With `--append-split-rows n` the
 *    same rows are also indexed (untimed) into splits of n rows, as appends of n rows make
 *    them, and every query runs on those too (`queries_appends` in the result).
 *
 * Usage (the benchmark runner builds the command line):
 * {{{
 * CeilingHarness --input <dir of *.json> --queries <queries.json> --work <dir> --out <result.json>
 *   [--threads 2] [--runs 5] [--warmup 1] [--heap <the product's default>] [--batch-rows 8192]
 *   [--max-rows-per-split 1000000] [--read-batch 2048] [--append-split-rows 0]
 * }}}
 * Input rows: {"ts": epoch micros, "level", "component", "host", "latency_ms", "message"}
 * (absent or null = SQL null). Queries: a JSON array of {"name", "fields": [...], "count_only",
 * "limit", "variants": {"<variant>": <query spec>}}, where a query spec is one of
 * {"all": true}, {"term": [f, v]}, {"phrase": [f, [tokens]]}, {"wildcard": [f, pattern]},
 * {"range": [f, lo|null, hi|null, type, loInclusive, hiInclusive]}, {"ast": "<query AST json>"},
 * {"bool": {"must": [...], "should": [...], "must_not": [...]}}, or
 * {"aggregate": {"kind": "count"|"terms", "field": f, "query": spec}} (a native aggregation).
 */
object CeilingHarness {
  private val mapper = new ObjectMapper()

  /** The benchmark table's columns, in the product's index kinds (message typed as text). */
  val Fields: Seq[IndexedField] = Seq(
    IndexedField("ts", TimestampType, IndexKind.DateTime),
    IndexedField("level", StringType, IndexKind.RawString),
    IndexedField("component", StringType, IndexKind.RawString),
    IndexedField("host", StringType, IndexKind.RawString),
    IndexedField("latency_ms", DoubleType, IndexKind.F64),
    IndexedField("message", StringType, IndexKind.Text)
  )

  final case class Split(
      path: String,
      numDocs: Long,
      footerStart: Long,
      footerEnd: Long,
      docMapping: String,
      bytes: Long)

  def main(args: Array[String]): Unit = {
    val opts = args.grouped(2).collect { case Array(k, v) => k.stripPrefix("--") -> v }.toMap
    def opt(k: String, d: String) = opts.getOrElse(k, d)
    val input = new File(opts("input"))
    val work = new File(opts("work"))
    val threads = opt("threads", "2").toInt
    val runs = opt("runs", "5").toInt
    val warmup = opt("warmup", "1").toInt
    val heap = opt("heap", IndexTablesConf.WriterHeapSize.default.toString).toLong
    val batchRows = opt("batch-rows", "8192").toInt
    val maxRows = opt("max-rows-per-split", "1000000").toLong
    val readBatch = opt("read-batch", "2048").toInt
    val appendSplitRows = opt("append-split-rows", "0").toLong
    work.mkdirs()

    val files = Option(input.listFiles()).getOrElse(Array.empty[File])
      .filter(f => f.getName.endsWith(".json") && f.length() > 0).sortBy(_.getName).toSeq
    require(files.nonEmpty, s"no *.json row files in $input")

    val out = mapper.createObjectNode()
    out.put("threads", threads).put("heap", heap).put("batch_rows", batchRows)

    // Ingest: warm-up rounds, then timed rounds, each into a fresh directory; the splits of the
    // last round are searched below.
    val ingestTimes = ArrayBuffer.empty[Double]
    var splits: Seq[Split] = Nil
    var rows = 0L
    (0 until warmup + runs).foreach { round =>
      val dir = new File(work, s"round-$round")
      dir.mkdirs()
      val (secs, produced) = ingest(files, dir, threads, heap, batchRows, maxRows)
      if (round >= warmup) ingestTimes += secs
      if (splits.nonEmpty) splits.foreach(s => new File(s.path).delete())
      splits = produced
      rows = produced.map(_.numDocs).sum
      System.err.println(f"ceiling ingest round $round: $rows rows in $secs%.3f s")
    }
    val ing = out.putObject("ingest")
    ing.put("rows", rows).put("splits", splits.size).put("split_bytes", splits.map(_.bytes).sum)
    putTimes(ing, ingestTimes)
    out.put("vm_hwm_after_ingest_kb", vmHwmKb())

    // The same rows as many small splits, as appends make them (not timed): queries run on both.
    val layouts = Seq("queries" -> splits) ++ (if (appendSplitRows <= 0) Nil
                                               else {
                                                 val dir = new File(work, "appends")
                                                 dir.mkdirs()
                                                 val (_, small) = ingest(
                                                   files,
                                                   dir,
                                                   threads,
                                                   heap,
                                                   batchRows,
                                                   appendSplitRows)
                                                 out.put("append_splits", small.size)
                                                 Seq("queries_appends" -> small)
                                               })

    // Queries, on each layout.
    val queries = mapper.readTree(new File(opts("queries")))
    val pool = Executors.newFixedThreadPool(threads)
    try layouts.foreach { case (key, layoutSplits) =>
        val qOut = out.putObject(key)
        queries.elements().asScala.foreach { q =>
          val name = q.get("name").asText()
          val fields = q.path("fields").elements().asScala.map(_.asText()).toArray
          val countOnly = q.path("count_only").asBoolean(false)
          val limit = if (q.hasNonNull("limit")) Some(q.get("limit").asInt()) else None
          val wOut = qOut.putObject(name)
          q.get("variants").fields().asScala.foreach { e =>
            val variant = e.getKey
            val spec = e.getValue
            val times = ArrayBuffer.empty[Double]
            var hits = 0L
            (0 until warmup + runs).foreach { round =>
              val t0 = System.nanoTime()
              hits = runQuery(pool, layoutSplits, spec, fields, countOnly, limit, readBatch)
              val secs = (System.nanoTime() - t0) / 1e9
              if (round >= warmup) times += secs
            }
            val v = wOut.putObject(variant)
            v.put("hits", hits)
            putTimes(v, times)
            System.err.println(
              f"ceiling query $key $name/$variant: $hits hits, median ${median(times)}%.4f s")
          }
        }
      }
    finally {
      pool.shutdown()
      pool.awaitTermination(1, TimeUnit.MINUTES)
    }
    out.put("vm_hwm_kb", vmHwmKb())
    val w = new PrintWriter(new File(opts("out")), "UTF-8")
    try w.print(mapper.writerWithDefaultPrettyPrinter().writeValueAsString(out))
    finally w.close()
  }

  private def putTimes(n: ObjectNode, times: collection.Seq[Double]): Unit = {
    val arr = n.putArray("seconds")
    times.foreach(t => arr.add(t))
    n.put("median_s", median(times)).put("min_s", times.min).put("max_s", times.max)
  }

  def median(xs: collection.Seq[Double]): Double = {
    val s = xs.sorted
    if (s.isEmpty) Double.NaN
    else if (s.size % 2 == 1) s(s.size / 2) else (s(s.size / 2 - 1) + s(s.size / 2)) / 2
  }

  private def vmHwmKb(): Long = {
    val line =
      Files.readAllLines(new File("/proc/self/status").toPath).asScala.find(_.startsWith("VmHWM:"))
    line.map(_.replaceAll("[^0-9]", "").toLong).getOrElse(-1L)
  }

  // ---- ingest -----------------------------------------------------------------------------

  /** Indexes every file into splits under `dir`, `threads` files at a time; seconds of wall time. */
  private def ingest(
      files: Seq[File],
      dir: File,
      threads: Int,
      heap: Long,
      batchRows: Int,
      maxRows: Long): (Double, Seq[Split]) = {
    val pool = Executors.newFixedThreadPool(threads)
    try {
      // Parse time is excluded per file; wall time is the slowest thread's native time summed
      // over the files it handled, approximated by the sum of native times divided among threads.
      val tasks = files.map { f =>
        pool.submit(new Callable[(Long, Seq[Split])] {
          override def call(): (Long, Seq[Split]) = indexFile(f, dir, heap, batchRows, maxRows)
        })
      }
      val results = tasks.map(_.get())
      // Each file runs on one thread; with files assigned round-robin the makespan is the
      // largest per-thread sum. Report that (the native-only wall time).
      val perThread = Array.fill(threads)(0L)
      results.map(_._1).sorted(Ordering[Long].reverse).foreach { ns =>
        val i = perThread.indexOf(perThread.min); perThread(i) += ns
      }
      (perThread.max / 1e9, results.flatMap(_._2))
    } finally {
      pool.shutdown()
      pool.awaitTermination(10, TimeUnit.MINUTES)
    }
  }

  /** Native nanoseconds spent on one file, and its splits. */
  private def indexFile(
      file: File,
      dir: File,
      heap: Long,
      batchRows: Int,
      maxRows: Long): (Long, Seq[Split]) = {
    var native = 0L
    val splits = ArrayBuffer.empty[Split]
    var current: Open = null
    val reader = new BufferedReader(
      new InputStreamReader(new FileInputStream(file), StandardCharsets.UTF_8),
      1 << 20)
    try {
      var line = reader.readLine()
      while (line != null) {
        if (line.nonEmpty) {
          val n = mapper.readTree(line)
          val t0 = System.nanoTime()
          if (current == null) current = new Open(dir, heap)
          current.add(n, batchRows)
          if (current.rows >= maxRows) { splits += current.finish(); current = null }
          native += System.nanoTime() - t0
        }
        line = reader.readLine()
      }
      val t0 = System.nanoTime()
      if (current != null) { splits += current.finish(); current = null }
      native += System.nanoTime() - t0
    } finally {
      reader.close()
      if (current != null) current.close()
    }
    (native, splits.toSeq)
  }

  /** One index under construction, as DocumentSplitWriter's PartitionIndex builds it. */
  private final class Open(parent: File, heap: Long) {
    val dir = new File(parent, s"index-${UUID.randomUUID()}")
    private val schema = DocumentSplitWriter.buildSchema(Fields)
    private val index = new Index(schema, dir.getAbsolutePath, false)
    private val writer: IndexWriter = index.writer(heap.toInt, 1)
    private var batch = new BatchDocumentBuilder()
    var rows = 0L

    def add(n: JsonNode, batchRows: Int): Unit = {
      val doc = new BatchDocument()
      Fields.foreach { f =>
        val v = n.get(f.name)
        if (v != null && !v.isNull) f.kind match {
          case IndexKind.DateTime => doc.addDate(f.name, toLocalDateTime(v.asLong()))
          case IndexKind.F64 => doc.addFloat(f.name, v.asDouble())
          case _ => doc.addText(f.name, v.asText())
        }
      }
      batch.addDocument(doc)
      rows += 1
      if (batch.getDocumentCount >= batchRows) flush()
    }

    private def flush(): Unit = if (batch.getDocumentCount > 0) {
      writer.addDocumentsBatch(batch)
      batch = new BatchDocumentBuilder()
    }

    def finish(): Split = {
      try {
        flush()
        writer.commit()
        writer.waitMergingThreads()
        writer.close()
        DocumentSplitWriter.mergeToOneSegment(index, heap)
      } finally close()
      val out = new File(parent, s"part-${UUID.randomUUID()}.split")
      val config = new QuickwitSplit.SplitConfig("indextables", "spark", "bench")
      val md = QuickwitSplit.convertIndexFromPath(dir.getAbsolutePath, out.getAbsolutePath, config)
      deleteRecursively(dir)
      Split(
        out.getAbsolutePath,
        md.getNumDocs,
        md.getFooterStartOffset,
        md.getFooterEndOffset,
        md.getDocMappingJson,
        out.length())
    }

    def close(): Unit =
      try writer.close()
      finally
        try index.close()
        finally schema.close()
  }

  private def toLocalDateTime(micros: Long): LocalDateTime = {
    val secs = Math.floorDiv(micros, 1000000L)
    val nanos = (Math.floorMod(micros, 1000000L) * 1000L).toInt
    LocalDateTime.ofEpochSecond(secs, nanos, ZoneOffset.UTC)
  }

  private def deleteRecursively(f: File): Unit = {
    Option(f.listFiles()).foreach(_.foreach(deleteRecursively))
    f.delete()
  }

  // ---- queries ----------------------------------------------------------------------------

  // Every request is made new (LeafCacheBypass), so every timed run searches, as a new query
  // would: tantivy4java 0.31.0's leaf-search cache cannot be turned off.
  private[bench] def cacheManager(): SplitCacheManager =
    SplitCacheManager.getInstance(new SplitCacheManager.CacheConfig("indextables-bench")
      .withMaxCacheSize(268435456L))

  /** The metadata a searcher of split `s` opens with: its footer offsets from the log. */
  private[bench] def splitMetadata(s: Split): QuickwitSplit.SplitMetadata =
    SplitSearchEngine.splitMetadata(
      new File(s.path).getName.stripSuffix(".split"),
      s.numDocs,
      s.footerStart,
      s.footerEnd,
      s.docMapping)

  /** Runs one query over every split (one task per split); the hits, fetched unless countOnly. */
  private def runQuery(
      pool: java.util.concurrent.ExecutorService,
      splits: Seq[Split],
      spec: JsonNode,
      fields: Array[String],
      countOnly: Boolean,
      limit: Option[Int],
      readBatch: Int): Long = {
    val tasks = splits.map { s =>
      pool.submit(new Callable[Long] {
        override def call(): Long = searchSplit(s, spec, fields, countOnly, limit, readBatch)
      })
    }
    val total = tasks.map(_.get()).sum
    limit.map(l => math.min(l.toLong, total)).getOrElse(total)
  }

  private def searchSplit(
      s: Split,
      spec: JsonNode,
      fields: Array[String],
      countOnly: Boolean,
      limit: Option[Int],
      readBatch: Int): Long = {
    val searcher = cacheManager().createSplitSearcher(s.path, splitMetadata(s))
    try {
      if (spec.has("aggregate")) return aggregate(searcher, spec.get("aggregate"))
      val query = toQuery(spec)
      val max = math.min(limit.map(_.toLong).getOrElse(s.numDocs), s.numDocs).toInt
      if (max <= 0) return 0L
      val result = searcher.search(LeafCacheBypass.query(query), max)
      val hits: Array[DocAddress] =
        try result.getHits.asScala.map(_.getDocAddress).toArray
        finally result.close()
      if (!countOnly && fields.nonEmpty) {
        val fieldSet = new java.util.HashSet[String](java.util.Arrays.asList(fields: _*))
        var pos = 0
        var values = 0L
        while (pos < hits.length) {
          val end = math.min(pos + readBatch, hits.length)
          // The public batch call that filters fields natively (docsBulkNativeWithFields).
          val docs = searcher.docBatch(
            java.util.Arrays.asList(java.util.Arrays.copyOfRange(hits, pos, end): _*),
            fieldSet)
          // Touch every value, as the product converts each one.
          docs.asScala.foreach { d =>
            fields.foreach { f =>
              val v = d.get(f); if (v != null && !v.isEmpty) values += 1
            }
          }
          pos = end
        }
      }
      hits.foreach(_.close())
      hits.length.toLong
    } finally searcher.close()
  }

  /**
   * A native aggregation instead of fetching hits ({"aggregate": {"kind": "count"|"terms",
   * "field": f, "query": spec}}): what aggregate pushdown could reach. Returns the documents
   * counted (for terms, the sum of the bucket counts).
   */
  private def aggregate(searcher: SplitSearcher, a: JsonNode): Long = {
    val field = a.get("field").asText()
    val agg: SplitAggregation = a.get("kind").asText() match {
      case "count" => new CountAggregation("agg", field)
      case "terms" => new TermsAggregation("agg", field, 1000, 1000)
      case other => throw new IllegalArgumentException(s"unknown aggregation $other")
    }
    aggregated(searcher, toQuery(a.get("query")), agg) match {
      case c: CountResult => c.getCount
      case t: TermsResult => t.getBuckets.asScala.map(_.getDocCount).sum
      case other => throw new IllegalStateException(s"unexpected aggregation result $other")
    }
  }

  /** `agg` of the matches of `q`, under a name never sent before: the cache answers nothing. */
  private[bench] def aggregated(
      searcher: SplitSearcher,
      q: SplitQuery,
      agg: SplitAggregation): AggregationResult = {
    val (sent, _) = LeafCacheBypass.names(Map(agg.getName -> agg))
    val result = searcher.aggregate(q, sent.asJava)
    try result.getAggregation(sent.keys.head)
    finally result.close()
  }

  def toQuery(spec: JsonNode): SplitQuery = {
    def str(n: JsonNode): String = if (n == null || n.isNull) null else n.asText()
    if (spec.has("all")) new SplitMatchAllQuery()
    else if (spec.has("ast")) new SplitParsedQuery(spec.get("ast").asText())
    else if (spec.has("term"))
      new SplitTermQuery(spec.get("term").get(0).asText(), spec.get("term").get(1).asText())
    else if (spec.has("phrase")) {
      val p = spec.get("phrase")
      new SplitPhraseQuery(
        p.get(0).asText(),
        p.get(1).elements().asScala.map(_.asText()).toList.asJava)
    } else if (spec.has("wildcard")) {
      new SplitWildcardQuery(
        spec.get("wildcard").get(0).asText(),
        spec.get("wildcard").get(1).asText())
    } else if (spec.has("range")) {
      val r = spec.get("range")
      def bound(v: JsonNode, inclusive: Boolean) =
        if (str(v) == null) SplitRangeQuery.RangeBound.unbounded()
        else if (inclusive) SplitRangeQuery.RangeBound.inclusive(str(v))
        else SplitRangeQuery.RangeBound.exclusive(str(v))
      new SplitRangeQuery(
        r.get(0).asText(),
        bound(r.get(1), r.get(4).asBoolean()),
        bound(r.get(2), r.get(5).asBoolean()),
        r.get(3).asText())
    } else if (spec.has("bool")) {
      val b = spec.get("bool")
      val q = new SplitBooleanQuery()
      b.path("must").elements().asScala.foreach(c => q.addMust(toQuery(c)))
      b.path("should").elements().asScala.foreach(c => q.addShould(toQuery(c)))
      b.path("must_not").elements().asScala.foreach(c => q.addMustNot(toQuery(c)))
      q
    } else throw new IllegalArgumentException(s"unknown query spec $spec")
  }
}

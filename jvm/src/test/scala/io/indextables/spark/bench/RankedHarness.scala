package io.indextables.spark.bench

import java.io.{File, PrintWriter}
import java.util.concurrent.{Callable, Executors}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper

import io.indextables.tantivy4java.core.{Index, Searcher}
import io.indextables.tantivy4java.split.merge.QuickwitSplit

/**
 * Raw tantivy4java's ranked top-k on a table's splits, without Spark: the ceiling the ranked
 * benchmark (tests/benchmarks/ranked.py) compares `ORDER BY _score DESC LIMIT k` with.
 *
 * Each split is extracted once (`QuickwitSplit.extractSplit`, not timed) and opened as a
 * tantivy index (`core.Index.open`), whose `Searcher` ranks by BM25 with that split's own
 * statistics. A timed query is parsed on every split and searched for its best `k` there, on a
 * pool of `threads`, and the splits' hits merged into the best `k` overall. Each query of the
 * list is timed once (the benchmark gives each run a new query, so no cache answers it).
 *
 * Arguments: --splits <file: one split path per line> --queries <JSON list of query strings>
 * --field <default field> --k <k> --threads <n> --work <dir> --out <result JSON>
 */
object RankedHarness {
  def main(args: Array[String]): Unit = {
    val a = args.grouped(2).collect { case Array(k, v) => k.stripPrefix("--") -> v }.toMap
    val mapper = new ObjectMapper()
    val splits = scala.io.Source.fromFile(a("splits")).getLines().filter(_.nonEmpty).toVector
    val queries =
      mapper.readTree(new File(a("queries"))).elements().asScala.map(_.asText()).toVector
    val field = a("field")
    val k = a("k").toInt
    val threads = a("threads").toInt
    val work = new File(a("work"))
    work.mkdirs()
    val indexes = splits.zipWithIndex.map { case (s, i) =>
      val dir = new File(work, s"split-$i")
      if (!dir.isDirectory) QuickwitSplit.extractSplit(s, dir.getPath)
      Index.open(dir.getPath)
    }
    val searchers: Vector[Searcher] = indexes.map(_.searcher())
    val pool = Executors.newFixedThreadPool(threads)
    val fields = java.util.Collections.singletonList(field)
    val results = queries.map { q =>
      val start = System.nanoTime()
      val perSplit = indexes.indices.map { i =>
        pool.submit(new Callable[Seq[Double]] {
          def call(): Seq[Double] = {
            val query = indexes(i).parseQuery(q, fields)
            val result = searchers(i).search(query, k)
            try result.getHits.asScala.map(_.getScore).toSeq
            finally { result.close(); query.close() }
          }
        })
      }.map(_.get())
      val best = perSplit.flatten.sorted(Ordering[Double].reverse).take(k)
      val seconds = (System.nanoTime() - start) / 1e9
      (q, seconds, best)
    }
    pool.shutdown()
    val out = mapper.createObjectNode()
    out.put("splits", splits.size)
    out.put("k", k)
    val list = out.putArray("queries")
    results.foreach { case (q, s, best) =>
      val n = list.addObject()
      n.put("query", q)
      n.put("seconds", s)
      val scores = n.putArray("scores")
      best.foreach(v => scores.add(v))
    }
    val w = new PrintWriter(a("out"))
    try w.write(mapper.writerWithDefaultPrettyPrinter().writeValueAsString(out))
    finally w.close()
    searchers.foreach(_.close())
    indexes.foreach(_.close())
  }
}

package io.indextables.spark.bench

import java.io.File
import java.time.{Instant, LocalDate, ZoneOffset}
import java.util.concurrent.{Callable, Executors, TimeUnit}

import scala.jdk.CollectionConverters._
import scala.collection.mutable

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.hadoop.conf.Configuration

import io.indextables.spark.config.IndexTablesOptions
import io.indextables.spark.read.aggregate.TermsWithMissing
import io.indextables.spark.transaction.TransactionLog
import io.indextables.tantivy4java.aggregation._
import io.indextables.tantivy4java.split._

/**
 * The raw tantivy4java answers to the aggregates benchmark's four queries
 * (tests/benchmarks/aggregates.py), without Spark, on the same table's splits: what an
 * application calling tantivy4java directly would pay, the floor under the product's times.
 *
 * Each split's searcher is opened once and every request is made new (LeafCacheBypass: the
 * leaf-search cache answers none, as in the product's benchmark runs). Each query runs one
 * aggregation per split on a pool of `threads` (NULL keys in tantivy's `missing` bucket, results converted by tantivy4java's getAggregation) and merges
 * the splits' buckets in plain maps:
 *  - level_counts: terms(level) with doc counts;
 *  - host_level_avg: terms(host) > terms(level) > stats(latency_ms);
 *  - hourly_one_day: date_histogram(ts, 1h) over a range query of round r's day, on the
 *    splits whose log statistics overlap it;
 *  - ts_min_max: stats(ts) on every split (there is no log to answer it).
 *
 * Usage: AggregateCeiling --table <dir> --days 2024-03-01,2024-03-02,... --out <json>
 * [--threads 2] [--runs 10] [--warmup 3]. Writes each query's median seconds and groups.
 */
object AggregateCeiling {
  private val NullKey = io.indextables.spark.read.aggregate.IndexTables4SparkAggregateReader.NullKey

  private final case class Split(searcher: SplitSearcher, tsMin: Option[Long], tsMax: Option[Long])

  def main(args: Array[String]): Unit = {
    val opts = args.grouped(2).collect { case Array(k, v) => k.stripPrefix("--") -> v }.toMap
    val table = new File(opts("table")).getAbsoluteFile
    val days = opts("days").split(",").map(LocalDate.parse).toSeq
    val threads = opts.getOrElse("threads", "2").toInt
    val runs = opts.getOrElse("runs", "10").toInt
    val warmup = opts.getOrElse("warmup", "3").toInt
    val snap = TransactionLog.forTable(
      table.toURI.toString,
      new Configuration(),
      IndexTablesOptions.Defaults.logSettings).snapshot()
    def seconds(m: Option[Map[String, String]]) =
      m.flatMap(_.get("ts")).map(v => Instant.parse(v).getEpochSecond)
    val splits = snap.allFiles.map { a =>
      val path = new File(table, a.path).getPath
      val metadata = CeilingHarness.splitMetadata(
        CeilingHarness.Split(
          path,
          a.numRecords.get,
          a.footerStartOffset.get,
          a.footerEndOffset.get,
          snap.docMappingFor(a).orNull,
          a.size))
      Split(
        CeilingHarness.cacheManager().createSplitSearcher(path, metadata),
        seconds(a.minValues),
        seconds(a.maxValues))
    }
    val pool = Executors.newFixedThreadPool(threads)
    try {
      def perSplit[T](on: Seq[Split])(f: Split => T): Seq[T] =
        on.map(s => pool.submit(new Callable[T] { override def call(): T = f(s) })).map(_.get())
      val queries: Seq[(String, Int => Int)] = Seq(
        "level_counts" -> { _ =>
          val counts = mutable.HashMap.empty[String, Long]
          perSplit(splits)(s => buckets(s, terms("g0", "level"))).foreach(_.foreach { b =>
            counts(b.getKeyAsString) = counts.getOrElse(b.getKeyAsString, 0L) + b.getDocCount
          })
          counts.size
        },
        "host_level_avg" -> { _ =>
          val sums = mutable.HashMap.empty[(String, String), (Double, Long)]
          val agg = terms("g0", "host")
          val inner = terms("g1", "level")
          inner.addSubAggregation("s", new StatsAggregation("s", "latency_ms"))
          agg.addSubAggregation("g1", inner)
          perSplit(splits)(s => buckets(s, agg)).foreach(_.foreach { h =>
            h.getSubAggregation("g1").asInstanceOf[TermsResult].getBuckets.asScala.foreach { l =>
              val st = l.getSubAggregation("s").asInstanceOf[StatsResult]
              val k = (h.getKeyAsString, l.getKeyAsString)
              val (sum, n) = sums.getOrElse(k, (0.0, 0L))
              sums(k) = (sum + (if (st.getCount == 0) 0.0 else st.getSum), n + st.getCount)
            }
          })
          sums.size
        },
        "hourly_one_day" -> { r =>
          val day = days(r % days.size)
          val (from, until) = (
            day.atStartOfDay(ZoneOffset.UTC).toEpochSecond,
            day.plusDays(1).atStartOfDay(ZoneOffset.UTC).toEpochSecond)
          val on = splits.filter(s => s.tsMin.forall(_ < until) && s.tsMax.forall(_ >= from))
          val query = new SplitRangeQuery(
            "ts",
            SplitRangeQuery.RangeBound.inclusive(Instant.ofEpochSecond(from).toString),
            SplitRangeQuery.RangeBound.exclusive(Instant.ofEpochSecond(until).toString),
            "date"
          )
          val hours = mutable.HashMap.empty[Double, Long]
          perSplit(on) { s =>
            val h = new DateHistogramAggregation("h", "ts").setFixedInterval("3600000ms")
              .setMinDocCount(1L)
            aggregated(s, query, h).asInstanceOf[DateHistogramResult].getBuckets.asScala
          }.foreach(_.foreach { b =>
            hours(b.getKey) = hours.getOrElse(b.getKey, 0L) + b.getDocCount
          })
          hours.size
        },
        "ts_min_max" -> { _ =>
          val bounds = perSplit(splits) { s =>
            val st = aggregated(s, new SplitMatchAllQuery(), new StatsAggregation("s", "ts"))
              .asInstanceOf[StatsResult]
            if (st.getCount == 0) None else Some((st.getMin, st.getMax))
          }.flatten
          // One group: the smallest minimum and the largest maximum, when any split has values.
          if (bounds.isEmpty) 0
          else { require(bounds.map(_._1).min <= bounds.map(_._2).max); 1 }
        }
      )
      val json = new ObjectMapper()
      val out = json.createObjectNode()
      out.put("threads", threads).put("runs", runs).put("warmup", warmup)
        .put("splits", splits.size)
      val qs = out.putObject("queries")
      queries.foreach { case (name, run) =>
        var groups = 0
        val times = (0 until warmup + runs).flatMap { r =>
          val start = System.nanoTime()
          groups = run(r)
          val took = (System.nanoTime() - start) / 1e9
          if (r >= warmup) Some(took) else None
        }.sorted
        val median =
          if (times.size % 2 == 1) times(times.size / 2)
          else (times(times.size / 2 - 1) + times(times.size / 2)) / 2
        qs.putObject(name).put("median_s", median).put("groups", groups)
      }
      json.writerWithDefaultPrettyPrinter().writeValue(new File(opts("out")), out)
    } finally {
      pool.shutdown()
      pool.awaitTermination(1, TimeUnit.MINUTES)
      splits.foreach(_.searcher.close())
    }
  }

  /** A terms aggregation asking for more buckets than a split can hold, NULLs as NullKey. */
  private def terms(name: String, field: String): TermsAggregation =
    new TermsWithMissing(name, field, 10001, NullKey)

  private def buckets(s: Split, agg: TermsAggregation): Seq[TermsResult.TermsBucket] =
    aggregated(s, new SplitMatchAllQuery(), agg).asInstanceOf[TermsResult].getBuckets.asScala.toSeq

  private def aggregated(s: Split, q: SplitQuery, agg: SplitAggregation): AggregationResult =
    CeilingHarness.aggregated(s.searcher, q, agg)
}

package io.indextables.spark.read

import scala.jdk.CollectionConverters._

import io.indextables.spark.IndexTablesTestBase
import io.indextables.tantivy4java.aggregation.{TermsAggregation, TermsResult}
import io.indextables.tantivy4java.split.{SplitAggregation, SplitMatchAllQuery, SplitSearcher, SplitTermQuery}

/**
 * `spark.indextables.cache.queryCache.enabled=false`: tantivy's leaf-search cache, which
 * tantivy4java 0.31.0 cannot turn off, answers no request, and answers stay the same.
 */
class LeafCacheBypassSuite extends IndexTablesTestBase {

  private def withSearcher[T](name: String)(f: SplitSearcher => T): T = {
    val path = tablePath(name)
    spark.range(200000).selectExpr("cast(id % 7 as string) as k", "id").coalesce(1)
      .write.format("indextables").save(path)
    val (plan, split) = SplitFixtures.planAndSplit(spark, path)
    val checked = SplitSearchEngine.check(plan, split)
    val searcher = SplitSearchEngine.borrow(checked, split, plan)
    try f(searcher)
    finally searcher.close()
  }

  private def terms(name: String): Map[String, SplitAggregation] =
    Map(name -> new TermsAggregation(name, "k", 100, 100))

  private def counts(s: SplitSearcher, aggs: Map[String, SplitAggregation], name: String) = {
    val r = s.aggregate(new SplitMatchAllQuery(), aggs.asJava)
    try r.getAggregation(name).asInstanceOf[TermsResult].getBuckets.asScala
        .map(b => b.getKeyAsString -> b.getDocCount).toMap
    finally r.close()
  }

  private def medianMillis(runs: Int)(f: => Unit): Double = {
    val times = (0 until runs).map { _ =>
      val t = System.nanoTime(); f; (System.nanoTime() - t) / 1e6
    }.sorted
    times(runs / 2)
  }

  test("a repeated aggregation is searched again under new names, with the same answer") {
    withSearcher("bypass-aggregation") { s =>
      val expected = counts(s, terms("g"), "g")
      assert(expected.values.sum == 200000 && expected.size == 7)
      // The same request every time: after the first, the leaf-search cache answers it.
      val cached = medianMillis(15)(counts(s, terms("g"), "g"))
      val searched = medianMillis(15) {
        val (sent, original) = LeafCacheBypass.names(terms("g"))
        val name = sent.keys.head
        assert(original(name) == "g" && name != "g")
        assert(counts(s, sent, name) == expected)
      }
      // Counting 200,000 documents costs several times more than a cache hit.
      assert(searched > 3 * cached, s"searched $searched ms, cached $cached ms")
    }
  }

  test("a search under a new boost finds the same documents") {
    withSearcher("bypass-search") { s =>
      def hits(q: io.indextables.tantivy4java.split.SplitQuery) = {
        val r = s.search(q, 200000)
        try NativeDocs.hitIds(r) match { case (segs, docs) => segs.zip(docs).toSet }
        finally r.close()
      }
      val q = new SplitTermQuery("k", "3")
      val expected = hits(q)
      val matching = expected.size
      assert(matching == (0 until 200000).count(_ % 7 == 3))
      // Compared without printing hundreds of thousands of addresses on a failure.
      val same = Seq.fill(2)(hits(LeafCacheBypass.query(q)) == expected)
      assert(same == Seq(true, true))
      assert(LeafCacheBypass.query(q).toQueryAstJson != LeafCacheBypass.query(q).toQueryAstJson)
    }
  }

  test("reads with the query cache off give the answers of reads with it on") {
    val path = tablePath("bypass-reads")
    spark.range(5000).selectExpr("cast(id % 7 as string) as k", "id").coalesce(2)
      .write.format("indextables").save(path)
    def answers(cache: Boolean) = {
      val df = spark.read.format("indextables")
        .option("spark.indextables.cache.queryCache.enabled", cache.toString).load(path)
      (
        df.groupBy("k").count().collect().map(r => r.getString(0) -> r.getLong(1)).toMap,
        df.filter("k = '3'").select("id").collect().map(_.getLong(0)).toSet,
        df.filter("k = '5'").limit(10).count())
    }
    val on = answers(cache = true)
    assert(answers(cache = false) == on)
    assert(answers(cache = false) == on)
    assert(
      on._1.values.sum == 5000 && on._2.size == (0 until 5000).count(_ % 7 == 3) && on._3 == 10)
  }
}

package io.indextables.spark.rank

import java.io.File
import java.nio.{ByteBuffer, ByteOrder}
import java.nio.charset.StandardCharsets.UTF_8
import java.nio.file.Files
import java.util.Base64

import scala.jdk.CollectionConverters._
import scala.util.Random

import org.apache.commons.io.FileUtils
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.tantivy4java.core.{DocAddress, Document, Index, Schema, SchemaBuilder}
import io.indextables.tantivy4java.split.{SplitCacheManager, SplitQuery, SplitTermQuery}
import io.indextables.tantivy4java.split.merge.QuickwitSplit

/**
 * The native ranker over splits made and extracted by tantivy4java: its scores against
 * tantivy4java's own BM25 (core.Searcher on the original index), its matches against
 * tantivy4java's split search of the same query AST, and table-wide statistics summed over
 * several splits against one split holding every doc.
 */
class NativeRankerSuite extends AnyFunSuite with BeforeAndAfterAll {
  import NativeRankerSuite._

  private lazy val dir = Files.createTempDirectory("native-ranker").toFile

  /**
   * msg: default tokenizer with positions; host: raw, basic; title: en_stem; tag: whitespace;
   * n, id: ints.
   */
  private def schema(): Schema = {
    val sb = new SchemaBuilder()
    try {
      sb.addTextField("msg", true, false, "default", "position")
        .addTextField("host", true, false, "raw", "basic")
        .addTextField("title", true, false, "en_stem", "freq")
        .addTextField("tag", true, false, "whitespace", "freq")
        .addIntegerField("n", true, true, true)
        .addIntegerField("id", true, true, true)
      sb.build()
    } finally sb.close()
  }

  // 40 docs of varied length and wording: fixed phrases and seeded random filler.
  private val docs: IndexedSeq[Doc] = {
    val rnd = new Random(42)
    val words = Seq(
      "disk",
      "full",
      "retry",
      "request",
      "served",
      "block",
      "user",
      "login",
      "failed",
      "cache",
      "miss",
      "queue",
      "slow",
      "network",
      "packet",
      "dropped",
      "peer")
    val phrases = Seq(
      "timeout error",
      "connection reset",
      "connection timeout",
      "error",
      "timeout",
      "connection was reset by peer",
      "reset connection",
      "timeout timeout error",
      "the error was a timeout",
      ""
    )
    val titles = Seq("running fast", "runs slowly", "the runner", "walked home", "jumping")
    (0 until 40).map { i =>
      val filler = Seq.fill(rnd.nextInt(12))(words(rnd.nextInt(words.size))).mkString(" ")
      val phrase = phrases(rnd.nextInt(phrases.size))
      val msg = if (rnd.nextBoolean()) s"$phrase $filler" else s"$filler $phrase"
      Doc(i, msg.trim, s"h${i % 3}", titles(rnd.nextInt(titles.size)), (i % 10).toLong)
    }
  }

  private def make(name: String, ds: Seq[Doc]): Made = {
    val indexDir = new File(dir, s"$name-index")
    val s = schema()
    try {
      val index = new Index(s, indexDir.getAbsolutePath, false)
      try {
        val writer = index.writer(50000000, 1)
        try {
          ds.foreach { d =>
            val doc = new Document()
            doc.addText("msg", d.msg)
            doc.addText("host", d.host)
            doc.addText("title", d.title)
            doc.addText("tag", s"Tag-${d.id % 4} ${d.title.toUpperCase}")
            doc.addInteger("n", d.n)
            doc.addInteger("id", d.id.toLong)
            writer.addDocument(doc)
          }
          writer.commit()
        } finally writer.close()
      } finally index.close()
    } finally s.close()
    val split = new File(dir, s"$name.split")
    val md = QuickwitSplit.convertIndexFromPath(
      indexDir.getAbsolutePath,
      split.getAbsolutePath,
      new QuickwitSplit.SplitConfig("idx", "src", "node"))
    val extracted = new File(dir, s"$name-extracted")
    QuickwitSplit.extractSplit(split.getAbsolutePath, extracted.getAbsolutePath)
    Made(name, indexDir, split, extracted, md)
  }

  private lazy val all: Made = make("all", docs)
  private lazy val parts: Seq[Made] =
    (0 until 3).map(p => make(s"part$p", docs.filter(_.id % 3 == p)))

  /** The three parts merged by tantivy4java (as MERGE SPLITS merges), and then extracted. */
  private lazy val merged: Made = {
    val split = new File(dir, "merged.split")
    val work = new File(dir, "merge-work")
    work.mkdirs()
    val config = QuickwitSplit.MergeConfig.builder()
      .indexUid("idx")
      .sourceId("src")
      .nodeId("node")
      .tempDirectoryPath(work.getAbsolutePath)
      .build()
    val md = QuickwitSplit.mergeSplits(
      parts.map(_.split.getAbsolutePath).asJava,
      split.getAbsolutePath,
      config)
    val extracted = new File(dir, "merged-extracted")
    QuickwitSplit.extractSplit(split.getAbsolutePath, extracted.getAbsolutePath)
    Made("merged", null, split, extracted, md)
  }

  private lazy val astSchema: Schema = schema()

  /** The query AST tantivy4java parses `q` into (default field msg), as the JVM gets it. */
  private def ast(q: String): String =
    SplitQuery.parseQuery(q, astSchema, Array("msg")).toQueryAstJson

  private lazy val cacheManager =
    SplitCacheManager.getInstance(
      new SplitCacheManager.CacheConfig("native-ranker-suite").withMaxCacheSize(64L << 20))

  /** The addresses tantivy4java's split search matches for `q`: the JVM's own match set. */
  private def splitMatches(m: Made, q: String): Set[Long] =
    splitMatches(m, (schema: Schema) => SplitQuery.parseQuery(q, schema, Array("msg")))

  private def splitMatches(m: Made, query: Schema => SplitQuery): Set[Long] = {
    val searcher = cacheManager.createSplitSearcher("file://" + m.split.getAbsolutePath, m.metadata)
    try {
      val result = searcher.search(query(searcher.getSchema), 10000)
      try result.getHits.asScala.map(h => address(h.getDocAddress)).toSet
      finally result.close()
    } finally searcher.close()
  }

  private def address(a: DocAddress): Long = (a.getSegmentOrd.toLong << 32) | a.getDoc.toLong

  /** tantivy4java's BM25 top hits for `q` (tantivy's query parser) on `m`'s original index. */
  private def coreTop(m: Made, q: String, k: Int): Seq[(Long, Float)] = {
    val index = Index.open(m.indexDir.getAbsolutePath)
    try {
      val searcher = index.searcher()
      try {
        val query = index.parseQuery(q, java.util.Arrays.asList("msg"))
        try {
          val result = searcher.search(query, k)
          try result.getHits.asScala.map(h => (address(h.getDocAddress), h.getScore.toFloat)).toSeq
          finally result.close()
        } finally query.close()
      } finally searcher.close()
    } finally index.close()
  }

  /** The id field of each address of `m`. */
  private def ids(m: Made, addresses: Seq[Long]): Seq[Int] = {
    val index = Index.open(m.extracted.getAbsolutePath)
    try {
      val searcher = index.searcher()
      try addresses.map { a =>
          val doc = searcher.doc(new DocAddress((a >>> 32).toInt, (a & 0xffffffffL).toInt))
          try doc.getFirst("id").asInstanceOf[Number].intValue()
          finally doc.close()
        }
      finally searcher.close()
    } finally index.close()
  }

  private def withIndex[T](m: Made)(f: RankedIndex => T): T = {
    val ix = RankedIndex.open(m.extracted.toPath)
    try f(ix)
    finally ix.close()
  }

  private def close(a: Float, b: Float): Boolean =
    math.abs(a - b) <= 1e-5 * math.max(math.abs(a), math.abs(b))

  private def assertScores(actual: Seq[Float], expected: Seq[Float], clue: String): Unit = {
    assert(actual.size === expected.size, clue)
    actual.zip(expected).foreach { case (a, e) => assert(close(a, e), s"$clue: $a vs $e") }
  }

  private def pairs(s: ScoredDocs): Seq[(Long, Float)] = s.addresses.toSeq.zip(s.scores.toSeq)

  override def afterAll(): Unit =
    try {
      astSchema.close()
      FileUtils.deleteQuietly(dir)
    } finally super.afterAll()

  test("topK with a split's own statistics scores as tantivy4java's BM25, in the same order") {
    // Each query means the same to tantivy's query parser and to the AST tantivy4java makes.
    val queries = Seq(
      "timeout OR error",
      "\"connection reset\"",
      "timeout AND error",
      "timeout^2 OR error",
      "title:running",
      "connection OR peer OR disk",
      "\"connection timeout\" OR reset"
    )
    withIndex(all) { ix =>
      queries.foreach { q =>
        val a = ast(q)
        val own = ix.statistics(a)
        assert(own.exact, q)
        assert(own.numDocs === docs.size.toLong, q)
        val expected = coreTop(all, q, 10)
        assert(expected.nonEmpty, q)
        Seq(own, RankStatistics.empty).foreach { stats =>
          val got = pairs(ix.topK(a, stats, 10))
          assertScores(got.map(_._2), expected.map(_._2), q)
          assert(got.map(_._1) === expected.map(_._1), q)
        }
      }
    }
  }

  test("statistics: numDocs, the fields' token counts and each term's doc freq by field name") {
    withIndex(all) { ix =>
      val stats = ix.statistics(ast("timeout OR error OR title:running"))
      assert(stats.numDocs === 40L)
      assert(stats.fieldTokens.keySet === Set("msg", "title"))
      val msgTokens = docs.map(_.msg.split("\\s+").count(_.nonEmpty).toLong).sum
      assert(stats.fieldTokens("msg") === msgTokens)
      def b64(s: String) = Base64.getEncoder.encodeToString(s.getBytes(UTF_8))
      val byTerm = stats.terms.map(t => (t.field, t.term) -> t.docFreq).toMap
      assert(byTerm.keySet === Set(
        ("msg", b64("timeout")),
        ("msg", b64("error")),
        ("title", b64("run"))))
      assert(byTerm(("msg", b64("timeout"))) ===
        docs.count(_.msg.split(" ").contains("timeout")).toLong)
      assert(byTerm(("msg", b64("error"))) ===
        docs.count(_.msg.split(" ").contains("error")).toLong)
      // The JSON round trip keeps everything.
      assert(RankStatistics.fromJson(stats.toJson) === stats)
    }
  }

  test("statistics summed over three splits rank each as one split holding every doc") {
    val queries = Seq(
      "timeout OR error",
      "\"connection reset\"",
      "timeout AND error",
      "timeout^2 OR error",
      "title:running OR connection",
      "timeout AND NOT host:h1")
    queries.foreach { q =>
      val a = ast(q)
      val wholeTop = withIndex(all)(ix => pairs(ix.topK(a, ix.statistics(a), 40)))
      val wholeIds = ids(all, wholeTop.map(_._1)).zip(wholeTop.map(_._2))
      val indexes = parts.map(p => RankedIndex.open(p.extracted.toPath))
      try {
        val sum = indexes.map(_.statistics(a)).reduce(_ + _)
        assert(sum.numDocs === 40L, q)
        assert(sum.exact, q)
        val merged = parts.zip(indexes).flatMap { case (p, ix) =>
          val top = pairs(ix.topK(a, sum, 40))
          ids(p, top.map(_._1)).zip(top.map(_._2))
        }.sortBy { case (id, score) => (-score, id) }
        val whole = wholeIds.sortBy { case (id, score) => (-score, id) }
        assert(merged.map(_._1) === whole.map(_._1), q)
        assertScores(merged.map(_._2), whole.map(_._2), q)
        // The best 5 too, each split asked for 5.
        val top5 = parts.zip(indexes).flatMap { case (_, ix) => ix.topK(a, sum, 5).scores.toSeq }
          .sorted(Ordering[Float].reverse).take(5)
        assertScores(top5, whole.take(5).map(_._2), q)
        // A split's own statistics rank differently from the table's (the sum matters).
        val own = pairs(indexes.head.topK(a, indexes.head.statistics(a), 40)).map(_._2)
        val table = pairs(indexes.head.topK(a, sum, 40)).map(_._2)
        if (own.nonEmpty) assert(own !== table, q)
      } finally indexes.foreach(_.close())
    }
  }

  test("statistics and topK over many indexes in one call equal the calls one index at a time") {
    val indexes = parts.map(p => RankedIndex.open(p.extracted.toPath))
    try {
      Seq("timeout OR error", "\"connection reset\"", "title:running OR connection").foreach { q =>
        val a = ast(q)
        val one = RankStatistics.sum(indexes.map(_.statistics(a)))
        Seq(1, 2, 8).foreach { threads =>
          assert(RankedIndex.statistics(indexes, Seq(a), threads) === one, s"$q, $threads threads")
        }
        // Two trees: each index's terms of both, each term once per index.
        val b = ast("timeout OR reset")
        val both = RankStatistics.sum(indexes.map { ix =>
          val (x, y) = (ix.statistics(a), ix.statistics(b))
          x.copy(
            fieldTokens = x.fieldTokens ++ y.fieldTokens,
            terms = (x.terms ++ y.terms).distinct.sortBy(t => (t.field, t.term)))
        })
        assert(RankedIndex.statistics(indexes, Seq(a, b), 2) === both, q)
        // Each index's own k (a different k each), scored with the table's statistics.
        val ks = indexes.indices.map(i => 2 + 3 * i)
        val many = RankedIndex.topK(indexes, indexes.map(_ => a), one, ks, 2)
        assert(many.size === indexes.size)
        indexes.indices.foreach { i =>
          val single = indexes(i).topK(a, one, ks(i))
          assert(many(i).addresses.toSeq === single.addresses.toSeq, s"$q, index $i")
          assert(many(i).scores.toSeq === single.scores.toSeq, s"$q, index $i")
        }
      }
      val lib = NativeRanker.lib
      val a = ast("timeout")
      val handles = indexes.map(_.live()).toArray
      def fails(f: => Any): String = intercept[RuntimeException](f).getMessage
      assert(fails(lib.topKMany(handles, Array(a), "{}", Array(1, 1, 1), 2)).contains(
        "one query and one k per index"))
      assert(fails(lib.topKMany(
        handles,
        Array(a, a, a),
        "{}",
        Array(1, 0, 1),
        2)).contains("k > 0"))
      assert(fails(lib.statisticsMany(handles :+ 987654321L, Array(a), 2)).contains("987654321"))
      assert(fails(lib.statisticsMany(handles, Array("{not json"), 2)).contains("not valid JSON"))
      assert(fails(lib.statisticsMany(null, Array(a), 2)).contains("handles are null"))
      // No index: nothing to sum.
      assert(RankedIndex.statistics(Nil, Seq(a), 2).numDocs === 0L)
    } finally indexes.foreach(_.close())
  }

  test("scoreAll returns every doc tantivy4java's split search matches, scored as topK") {
    val queries = Seq(
      "timeout OR error",
      "timeout AND error",
      "\"connection reset\"",
      "\"connection reset\"~2",
      "timeout AND NOT host:h1",
      "NOT host:h1",
      "title:running",
      "(timeout OR error) AND NOT host:h2",
      "timeout^3 error",
      "host:h1",
      "nothingmatches",
      "reset AND (connection OR peer)",
      "*"
    )
    withIndex(all) { ix =>
      queries.foreach { q =>
        val a = ast(q)
        val stats = ix.statistics(a)
        assert(stats.exact, q)
        val scored = ix.scoreAll(a, stats)
        val expected = splitMatches(all, q)
        assert(scored.addresses.toSet === expected, q)
        assert(scored.size === expected.size, q)
        // By address (Ranking.lookup relies on it).
        assert(scored.addresses.toSeq === scored.addresses.toSeq.sorted, q)
        if (scored.size > 0) {
          val top = ix.topK(a, stats, scored.size)
          assert(top.addresses.toSet === expected, q)
          val byAddress = pairs(scored).toMap
          pairs(top).foreach { case (addr, s) => assert(close(byAddress(addr), s), q) }
          // Best first, ties by ascending address.
          pairs(top).sliding(2).foreach {
            case Seq((a1, s1), (a2, s2)) => assert(s1 > s2 || (s1 == s2 && a1 < a2), q)
            case _ =>
          }
        }
      }
    }
  }

  test("phrases, slop and boosts score as their parts say") {
    withIndex(all) { ix =>
      val stats = RankStatistics.empty
      val phrase = ix.scoreAll(ast("\"connection reset\""), stats)
      val sloppy = ix.scoreAll(ast("\"connection reset\"~2"), stats)
      assert(phrase.size > 0)
      // A slop widens the matches: "connection was reset" and "reset connection" too.
      assert(phrase.addresses.toSet.subsetOf(sloppy.addresses.toSet))
      assert(sloppy.size > phrase.size)
      // A boost multiplies a clause's score.
      val plain = pairs(ix.scoreAll(ast("timeout"), stats)).toMap
      val boosted = pairs(ix.scoreAll(ast("timeout^2"), stats)).toMap
      assert(plain.keySet === boosted.keySet)
      plain.foreach { case (addr, s) => assert(close(boosted(addr), 2 * s)) }
      // OR sums the clauses' scores; AND keeps the docs both match.
      val error = pairs(ix.scoreAll(ast("error"), stats)).toMap
      val or = pairs(ix.scoreAll(ast("timeout OR error"), stats)).toMap
      val and = pairs(ix.scoreAll(ast("timeout AND error"), stats)).toMap
      assert(or.keySet === plain.keySet ++ error.keySet)
      assert(and.keySet === plain.keySet.intersect(error.keySet))
      or.foreach { case (addr, s) =>
        assert(close(s, plain.getOrElse(addr, 0f) + error.getOrElse(addr, 0f)))
      }
      // NOT takes out, and adds nothing to the rest.
      val not = pairs(ix.scoreAll(ast("timeout AND NOT error"), stats)).toMap
      assert(not.keySet === plain.keySet -- error.keySet)
      not.foreach { case (addr, s) => assert(close(s, plain(addr))) }
    }
  }

  test("a clause the ranker cannot score adds nothing, restricts nothing, and is not exact") {
    withIndex(all) { ix =>
      val timeout = ast("timeout")
      val plain = pairs(ix.scoreAll(timeout, ix.statistics(timeout))).toMap
      assert(plain.nonEmpty)
      Seq(
        "n:[1 TO 5] AND timeout",
        "timeout OR n:[1 TO 5]",
        "timeout AND msg:err*",
        "timeout AND NOT n:[1 TO 5]",
        "timeout AND nosuchfield:x").foreach { q =>
        val a = ast(q)
        val stats = ix.statistics(a)
        assert(!stats.exact, q)
        val got = pairs(ix.scoreAll(a, stats)).toMap
        assert(got.keySet === plain.keySet, q)
        got.foreach { case (addr, s) => assert(close(s, plain(addr)), q) }
      }
      // msg:time* AND NOT host:h1: the wildcard adds 0 and restricts nothing, the NOT stays.
      val mixed = ast("msg:time* AND NOT host:h1")
      assert(!ix.statistics(mixed).exact)
      val notH1 = splitMatches(all, "NOT host:h1")
      assert(ix.scoreAll(mixed, RankStatistics.empty).addresses.toSet === notH1)
      // `+` keeps exact only when both are.
      assert(!(ix.statistics(mixed) + ix.statistics(timeout)).exact)
      assert((ix.statistics(timeout) + RankStatistics.empty).exact)
    }
  }

  test("errors throw RuntimeExceptions that name what is at fault, and the JVM goes on") {
    withIndex(all) { ix =>
      val timeout = ast("timeout")
      def fails(f: => Any): String = {
        val e = intercept[RuntimeException](f)
        assert(e.getMessage != null)
        e.getMessage
      }
      assert(fails(ix.statistics("{not json")).contains("not valid JSON"))
      assert(fails(ix.topK("[1, 2]", RankStatistics.empty, 3)).contains("not a JSON object"))
      assert(fails(ix.scoreAll("""{"field":"msg"}""", RankStatistics.empty)).contains("type"))
      val noField = """{"type":"bool","must":[{"type":"full_text","text":"x"}]}"""
      assert(fails(ix.statistics(noField)).contains("$.must[0]"))
      assert(fails(ix.topK(timeout, RankStatistics.empty, 0)).contains("k > 0"))
      // A k past the doc count is every match, not an allocation of k hits.
      assert(ix.topK(timeout, RankStatistics.empty, Int.MaxValue).size ===
        ix.scoreAll(timeout, RankStatistics.empty).size)
      val lib = NativeRanker.lib
      val badTerm = """{"numDocs":40,"terms":[{"field":"msg","term":"%%%","docFreq":1}]}"""
      val h = lib.open(all.extracted.getAbsolutePath)
      try {
        assert(fails(lib.topK(h, timeout, badTerm, 3)).contains("base64"))
        assert(fails(lib.topK(h, timeout, "{", 3)).contains("statistics JSON"))
        val b64 = Base64.getEncoder.encodeToString("timeout".getBytes(UTF_8))
        val tooMany = s"""{"numDocs":2,"terms":[{"field":"msg","term":"$b64","docFreq":9}]}"""
        assert(fails(lib.topK(h, timeout, tooMany, 3)).contains("exceeds numDocs"))
      } finally lib.close(h)
      // The raw handle once closed: an error, not a crash; closing again is a no-op.
      assert(fails(lib.scoreAll(h, timeout, "{}")).contains("closed"))
      lib.close(h)
      assert(fails(lib.open(new File(dir, "no-such-index").getAbsolutePath))
        .contains("no-such-index"))
      // An unknown node type over a missing field is not an error: not exact, neutral.
      val unknown = """{"type":"bool","should":[{"type":"fancy","field":"nope"}]}"""
      assert(!ix.statistics(unknown).exact)
      assert(ix.scoreAll(unknown, RankStatistics.empty).size === 0)
      // The JVM and the index go on.
      assert(ix.scoreAll(timeout, RankStatistics.empty).size > 0)
    }
    val closed = RankedIndex.open(all.extracted.toPath)
    closed.close()
    closed.close()
    assert(intercept[RuntimeException](closed.statistics(ast("timeout")))
      .getMessage.contains("closed"))
  }

  test("query text is cut as tantivy4java's split search cuts it: case, punctuation, length") {
    val long = "x" * 45
    val odd = IndexedSeq(
      Doc(0, s"Timeout, ERROR: $long done", "x" * 300, s"Running $long", 1),
      Doc(1, s"timeout-error ${"y" * 39} done", "h1", "runner", 2),
      Doc(2, "nothing here", "h2", "walked", 3)
    )
    val m = make("odd", odd)
    withIndex(m) { ix =>
      Seq(
        "TIMEOUT",
        "\"timeout error\"",
        long,
        "y" * 39,
        s"done AND $long",
        "title:RUNS",
        "timeout:error",
        "tag:tag-1",
        "tag:Tag-1",
        "tag:RUNNING",
        "tag:Tag-0 OR title:walk",
        s"host:${"x" * 300}",
        s"title:$long",
        "title:running",
        "h1"
      ).foreach { q =>
        val a = ast(q)
        val stats = ix.statistics(a)
        assert(ix.scoreAll(a, stats).addresses.toSet === splitMatches(m, q), q)
      }
    }
  }

  test("a term node matches what tantivy4java's split search of a term query matches") {
    withIndex(all) { ix =>
      Seq(
        ("msg", "timeout"),
        ("msg", "Timeout"),
        ("host", "h1"),
        ("title", "running"),
        ("title", "run"),
        ("tag", "tag-1"),
        ("tag", "Tag-1")).foreach { case (f, v) =>
        val term = new SplitTermQuery(f, v)
        val a = term.toQueryAstJson
        val stats = ix.statistics(a)
        assert(stats.exact, a)
        assert(ix.scoreAll(a, stats).addresses.toSet === splitMatches(all, (_: Schema) => term), a)
      }
    }
  }

  test("openSplit reads the split file itself exactly as open reads it extracted") {
    val queries = Seq(
      "timeout OR error",
      "\"connection reset\"",
      "\"connection reset\"~2",
      "timeout AND error",
      "timeout^2 OR error",
      "title:running OR connection",
      "timeout AND NOT host:h1",
      "NOT host:h1",
      "tag:Tag-1 OR peer",
      "n:[1 TO 5] AND timeout",
      "nothingmatches",
      "*"
    )
    val splits = Seq(all, merged) ++ parts
    // The table's statistics, summed over the parts opened as split files.
    def tableStats(a: String): RankStatistics = {
      val ixs = parts.map(p => RankedIndex.openSplit(p.split.toPath))
      try ixs.map(_.statistics(a)).reduce(_ + _)
      finally ixs.foreach(_.close())
    }
    splits.foreach { m =>
      val fromFile = RankedIndex.openSplit(m.split.toPath)
      val fromDir = RankedIndex.open(m.extracted.toPath)
      try queries.foreach { q =>
          val a = ast(q)
          val clue = s"${m.name}: $q"
          val own = fromFile.statistics(a)
          assert(own === fromDir.statistics(a), clue)
          Seq(own, RankStatistics.empty, tableStats(a)).foreach { stats =>
            Seq(1, 5, 40).foreach { k =>
              val f = fromFile.topK(a, stats, k)
              val d = fromDir.topK(a, stats, k)
              assert(f.addresses.toSeq === d.addresses.toSeq, s"$clue k=$k")
              assert(f.scores.toSeq === d.scores.toSeq, s"$clue k=$k")
            }
            val f = pairs(fromFile.scoreAll(a, stats)).sortBy(_._1)
            val d = pairs(fromDir.scoreAll(a, stats)).sortBy(_._1)
            assert(f === d, clue)
          }
        }
      finally {
        fromFile.close()
        fromDir.close()
      }
    }
    // The merged split holds every doc, in one segment: ranked as the split of them all.
    val a = ast("timeout OR error")
    val (mergedIds, allIds) = Seq(merged, all).map { m =>
      val top = withSplit(m)(ix => pairs(ix.topK(a, ix.statistics(a), 40)))
      ids(m, top.map(_._1)).zip(top.map(_._2)).sortBy { case (id, s) => (-s, id) }
    } match { case Seq(x, y) => (x, y) }
    assert(mergedIds.map(_._1) === allIds.map(_._1))
    assertScores(mergedIds.map(_._2), allIds.map(_._2), "merged vs all")
    // Opening a split writes nothing next to it (no lock, no .managed.json).
    assert(all.split.getParentFile.listFiles().forall(f =>
      !f.getName.startsWith(".") && !f.getName.endsWith(".lock")))
  }

  test("openSplit on a damaged split throws a RuntimeException naming it, and the JVM goes on") {
    val bytes = Files.readAllBytes(all.split.toPath)
    def damaged(name: String, content: Array[Byte]): File = {
      val f = new File(dir, s"damaged-$name.split")
      Files.write(f.toPath, content)
      f
    }
    def fails(f: File): String = {
      val e = intercept[RuntimeException](RankedIndex.openSplit(f.toPath))
      assert(e.getMessage != null)
      assert(e.getMessage.contains(f.getName), e.getMessage)
      e.getMessage
    }
    val footer = Footer(bytes)
    assert(fails(new File(dir, "no-such.split")).contains("cannot open the split file"))
    assert(fails(damaged("empty", Array.emptyByteArray)).contains("too few"))
    // Truncated at several points: the footer no longer fits (never a crash).
    Seq(1, 7, 100, bytes.length / 2, bytes.length - 5, bytes.length - 1).foreach { n =>
      assert(fails(damaged(s"cut$n", bytes.take(n))).contains("damaged"), n)
    }
    // Trailing garbage shifts the footer.
    assert(fails(damaged("tail", bytes ++ Array.fill[Byte](3)(7))).contains("damaged"))
    val wrongMagic = bytes.clone()
    wrongMagic(footer.metadataStart) = (wrongMagic(footer.metadataStart) ^ 0xff).toByte
    assert(fails(damaged("magic", wrongMagic)).contains("magic"))
    // A file table pointing past the data, not JSON, or without meta.json.
    val outside = footer.withJson(footer.json.replaceFirst("\"end\": *\\d+", "\"end\": 99999999"))
    assert(fails(damaged("outside", outside)).contains("outside the data"))
    assert(fails(damaged("notjson", footer.withJson("{\"files\": {"))).contains("JSON"))
    val noMeta = footer.withJson(footer.json.replace("\"meta.json\"", "\"meta.jsox\""))
    assert(fails(damaged("nometa", noMeta)).contains("no meta.json"))
    // A meta.json that is not tantivy's: tantivy's own error, with the split named.
    val (metaStart, metaEnd) = footer.range("meta.json")
    val badMeta = bytes.clone()
    (metaStart until metaEnd).foreach(i => badMeta(i) = 'x'.toByte)
    assert(fails(damaged("badmeta", badMeta)).contains("cannot open the split"))
    // The JVM and the ranker go on.
    withSplit(all)(ix => assert(ix.scoreAll(ast("timeout"), RankStatistics.empty).size > 0))
  }

  private def withSplit[T](m: Made)(f: RankedIndex => T): T = {
    val ix = RankedIndex.openSplit(m.split.toPath)
    try f(ix)
    finally ix.close()
  }

  test("RankStatistics: + sums by field and term, empty is its identity, JSON round-trips") {
    val a = RankStatistics(10, Map("msg" -> 100L), Seq(TermStat("msg", "dA==", 3)))
    val b = RankStatistics(
      5,
      Map("msg" -> 50L, "t" -> 7L),
      Seq(TermStat("msg", "dA==", 2), TermStat("t", "eA==", 1)),
      exact = false)
    val s = a + b
    assert(s.numDocs === 15)
    assert(s.fieldTokens === Map("msg" -> 150L, "t" -> 7L))
    assert(s.terms.toSet === Set(TermStat("msg", "dA==", 5), TermStat("t", "eA==", 1)))
    assert(!s.exact)
    assert(a + RankStatistics.empty === a)
    assert(RankStatistics.fromJson(s.toJson) === s)
    assert(RankStatistics.fromJson("{}") === RankStatistics.empty)
  }
}

object NativeRankerSuite {
  private final case class Doc(id: Int, msg: String, host: String, title: String, n: Long)

  /**
   * A split's footer, parsed as SplitFileCheck parses it: `[data][magic, version, JSON][u32
   * metadata length][hotcache][u32 hotcache length]`.
   */
  private final case class Footer(bytes: Array[Byte]) {
    private def u32(at: Int): Int =
      ByteBuffer.wrap(bytes).order(ByteOrder.LITTLE_ENDIAN).getInt(at)
    private val hotcacheLen = u32(bytes.length - 4)
    private val hotcacheStart = bytes.length - 4 - hotcacheLen
    private val metadataLen = u32(hotcacheStart - 4)
    val metadataStart: Int = hotcacheStart - 4 - metadataLen
    val json: String = new String(bytes, metadataStart + 8, metadataLen - 8, UTF_8)

    /** The split with its file table replaced by `newJson`, all else kept. */
    def withJson(newJson: String): Array[Byte] = {
      val j = newJson.getBytes(UTF_8)
      val out = ByteBuffer.allocate(bytes.length - metadataLen + 8 + j.length)
        .order(ByteOrder.LITTLE_ENDIAN)
      out.put(bytes, 0, metadataStart + 8).put(j).putInt(8 + j.length)
      out.put(bytes, hotcacheStart, bytes.length - hotcacheStart)
      out.array()
    }

    /** The byte range of the bundled file `name`. */
    def range(name: String): (Int, Int) = {
      val r = new com.fasterxml.jackson.databind.ObjectMapper().readTree(json).get("files")
        .get(name)
      (r.get("start").asInt, r.get("end").asInt)
    }
  }

  /** An index of docs, its split, and the split extracted into a directory. */
  private final case class Made(
      name: String,
      indexDir: File,
      split: File,
      extracted: File,
      metadata: QuickwitSplit.SplitMetadata)
}

package io.indextables.spark.rank

import java.io.File
import java.nio.file.Files

import scala.jdk.CollectionConverters._

import org.apache.commons.io.FileUtils
import org.scalatest.BeforeAndAfterAll
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.tantivy4java.core.{DocAddress, Document, Index, Schema, SchemaBuilder}
import io.indextables.tantivy4java.split.{SplitCacheManager, SplitQuery}
import io.indextables.tantivy4java.split.merge.QuickwitSplit

/**
 * The native highlighter (NativeRanker.snippet) against tantivy4java's split search of the same
 * query AST: a value gets a snippet exactly when the split search matches its doc, for each
 * tokenizer a table can give a text column, and every mark is a token the query names.
 */
class SnippetSuite extends AnyFunSuite with BeforeAndAfterAll {

  private lazy val dir = Files.createTempDirectory("snippet-suite").toFile

  // field -> tokenizer
  private val fields = Seq("msg" -> "default", "title" -> "en_stem", "tag" -> "whitespace")

  private def schema(): Schema = {
    val sb = new SchemaBuilder()
    try {
      fields.foreach { case (f, t) => sb.addTextField(f, true, false, t, "position") }
      sb.addIntegerField("id", true, true, true)
      sb.build()
    } finally sb.close()
  }

  private val values: IndexedSeq[Map[String, String]] = {
    val msgs = Seq(
      "Connection reset by peer, then a timeout error",
      "timeout error: the connection was reset",
      "reset connection; error",
      "The TIMEOUT, the Timeout and the timeout.",
      "nothing to see here",
      "connection timeout error reset",
      "error error error connection reset",
      ""
    )
    val titles = Seq("running fast", "He runs slowly", "the runner", "Walked home", "jumping jacks")
    val tags = Seq("Disk-Full ALERT", "disk full", "alert", "Network Down")
    (0 until 24).map { i =>
      Map(
        "msg" -> msgs(i % msgs.size),
        "title" -> titles(i % titles.size),
        "tag" -> tags(i % tags.size))
    }
  }

  private lazy val split: (File, QuickwitSplit.SplitMetadata, File) = {
    val indexDir = new File(dir, "index")
    val s = schema()
    try {
      val index = new Index(s, indexDir.getAbsolutePath, false)
      try {
        val writer = index.writer(50000000, 1)
        try {
          values.zipWithIndex.foreach { case (v, i) =>
            val doc = new Document()
            v.foreach { case (f, text) => doc.addText(f, text) }
            doc.addInteger("id", i.toLong)
            writer.addDocument(doc)
          }
          writer.commit()
        } finally writer.close()
      } finally index.close()
    } finally s.close()
    val file = new File(dir, "index.split")
    val md = QuickwitSplit.convertIndexFromPath(
      indexDir.getAbsolutePath,
      file.getAbsolutePath,
      new QuickwitSplit.SplitConfig("idx", "src", "node"))
    val extracted = new File(dir, "extracted")
    QuickwitSplit.extractSplit(file.getAbsolutePath, extracted.getAbsolutePath)
    (file, md, extracted)
  }

  private lazy val astSchema: Schema = schema()

  private def ast(q: String, field: String): String =
    SplitQuery.parseQuery(q, astSchema, Array(field)).toQueryAstJson

  private lazy val cacheManager =
    SplitCacheManager.getInstance(
      new SplitCacheManager.CacheConfig("snippet-suite").withMaxCacheSize(64L << 20))

  /**
   * One searcher of the split for every query, as the scans keep theirs in a pool. A searcher
   * opened and closed per query on the same split failed now and then in CI's full run only
   * (a panic in tantivy4java's leaf search, `index out of bounds` in `vint.rs`, or `Reach end of
   * buffer while reading VInt`), never when this suite ran alone or in a loop of 120 splits.
   */
  private lazy val splitSearcher = {
    val (file, md, _) = split
    cacheManager.createSplitSearcher("file://" + file.getAbsolutePath, md)
  }

  /** The ids of the docs tantivy4java's split search matches for `q` (default field `field`). */
  private def splitMatches(q: String, field: String): Set[Int] = {
    val (_, _, extracted) = split
    val addresses = {
      val result = splitSearcher.search(
        SplitQuery.parseQuery(q, splitSearcher.getSchema, Array(field)),
        1000)
      try result.getHits.asScala.map(_.getDocAddress).toVector
      finally result.close()
    }
    val index = Index.open(extracted.getAbsolutePath)
    try {
      val s = index.searcher()
      try addresses.map { a =>
          val doc = s.doc(new DocAddress(a.getSegmentOrd, a.getDoc))
          try doc.getFirst("id").asInstanceOf[Number].intValue()
          finally doc.close()
        }.toSet
      finally s.close()
    } finally index.close()
  }

  private def snippet(
      field: String,
      q: String,
      text: String,
      maxChars: Int = 150,
      pre: String = "<b>",
      post: String = "</b>",
      html: Boolean = false): Option[String] =
    NativeRanker.snippet(
      fields.toMap.apply(field),
      field,
      ast(q, field),
      text,
      maxChars,
      pre,
      post,
      html)

  private val Mark = "<b>(.*?)</b>".r

  override def afterAll(): Unit =
    try {
      splitSearcher.close()
      astSchema.close()
      FileUtils.deleteQuietly(dir)
    } finally super.afterAll()

  test("a value gets a snippet exactly when tantivy4java's split search matches it") {
    val queries = Map(
      "msg" -> Seq(
        "timeout",
        "TIMEOUT",
        "timeout OR peer",
        "timeout AND reset",
        "\"connection reset\"",
        "\"reset connection\"",
        "\"connection reset\"~2",
        "connection-reset",
        "error AND NOT peer",
        "(timeout AND peer) OR nothing",
        "nomatch"
      ),
      "title" -> Seq("running", "runs", "RUN", "\"runs slowly\"", "walking OR jump"),
      "tag" -> Seq("disk", "ALERT", "alert OR down", "\"disk full\"")
    )
    queries.foreach { case (field, qs) =>
      qs.foreach { q =>
        val expected = splitMatches(q, field)
        val got = values.indices.filter(i => snippet(field, q, values(i)(field)).isDefined).toSet
        assert(got === expected, s"$field: $q")
      }
    }
  }

  test("marks are the matched tokens: stems, case, phrase occurrences only") {
    assert(
      snippet("title", "running", "He runs slowly") === Some("He <b>runs</b> slowly"))
    assert(
      snippet("msg", "TIMEOUT", "The TIMEOUT, the Timeout.") ===
        Some("The <b>TIMEOUT</b>, the <b>Timeout</b>."))
    assert(
      snippet("msg", "\"connection reset\"", "reset connection; connection reset") ===
        Some("reset connection; <b>connection</b> <b>reset</b>"))
    assert(
      snippet("msg", "error AND NOT peer", "timeout error: the connection was reset") ===
        Some("timeout <b>error</b>: the connection was reset"))
    // (timeout AND peer) did not match: timeout is not marked.
    assert(
      snippet("msg", "(timeout AND peer) OR error", "timeout error") ===
        Some("timeout <b>error</b>"))
    values.foreach { v =>
      snippet("msg", "timeout OR reset", v("msg")).foreach { s =>
        Mark.findAllMatchIn(s).map(_.group(1).toLowerCase).foreach { m =>
          assert(Set("timeout", "reset").contains(m), s)
        }
      }
    }
  }

  test("tags, the length limit, the whole value and HTML escaping") {
    val long = ("word " * 50) + "needle" + (" more" * 50)
    val s = snippet("msg", "needle", long, maxChars = 30).get
    assert(s.contains("<b>needle</b>"))
    assert(s.replace("<b>", "").replace("</b>", "").length <= 30, s)
    assert(snippet("msg", "needle", long, maxChars = 0).get.replace("<b>", "").replace(
      "</b>",
      "") === long)
    assert(
      snippet("msg", "b", "a<b> & b", pre = "<em>", post = "</em>", html = true) ===
        Some("a&lt;<em>b</em>&gt; &amp; <em>b</em>"))
    assert(snippet("msg", "b", "a<b> & b", pre = "[", post = "]") === Some("a<[b]> & [b]"))
    assert(snippet("msg", "*", "anything") === None)
    assert(snippet("msg", "title:running", "running") === None)
  }

  test("errors are RuntimeExceptions naming the fault") {
    val e = intercept[RuntimeException] {
      NativeRanker.snippet("nope", "msg", ast("x", "msg"), "x", 10, "<b>", "</b>", false)
    }
    assert(e.getMessage.contains("unknown tokenizer 'nope'"), e.getMessage)
    val bad = intercept[RuntimeException] {
      NativeRanker.snippet("default", "msg", "{", "x", 10, "<b>", "</b>", false)
    }
    assert(bad.getMessage.contains("not valid JSON"), bad.getMessage)
    val negative = intercept[RuntimeException] {
      NativeRanker.snippet("default", "msg", ast("x", "msg"), "x", -1, "<b>", "</b>", false)
    }
    assert(negative.getMessage.contains("maxChars >= 0"), negative.getMessage)
  }
}

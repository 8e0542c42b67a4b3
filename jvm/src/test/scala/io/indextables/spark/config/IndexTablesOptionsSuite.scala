package io.indextables.spark.config

import java.util.Locale

import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.filters.IndexQueryRegistry
import io.indextables.spark.schema.IndexingRequest

/** The registry and the one resolver: every key's precedence and case, validation, log settings. */
class IndexTablesOptionsSuite extends AnyFunSuite {

  /** Two valid values of `e` that differ from each other (the first differs from the default). */
  private def samples(e: ConfEntry[_]): (String, String) = e.default match {
    case _ if e == IndexTablesConf.SplitsPerTask => ("3", "auto")
    case _ if e == IndexTablesConf.DiskCachePath => ("/cache/b", "/cache/a")
    case _ if e == IndexTablesConf.StreamStartingVersion => ("5", "latest")
    case b: Boolean => ((!b).toString, b.toString)
    case i: Int => ((i + 1).toString, (i + 2).toString)
    case l: Long => ((l + 1).toString, (l + 2).toString)
    case d: Double => ((d + 0.5).toString, (d + 1.0).toString)
    case s: String =>
      val others = e.expected.split(" or ").map(_.trim).filterNot(_ == s)
      (others.head, s)
  }

  private def camel(k: String) = k
  private def lower(k: String) = k.toLowerCase(Locale.ROOT)
  private def upper(k: String) = k.toUpperCase(Locale.ROOT)

  test("every key is declared once, under spark.indextables., with a doc and a valid default") {
    val keys = IndexTablesConf.allEntries.map(_.key.toLowerCase(Locale.ROOT))
    assert(keys.distinct.size === keys.size)
    IndexTablesConf.allEntries.foreach { e =>
      assert(e.key.startsWith("spark.indextables."), e.key)
      assert(e.doc.nonEmpty, e.key)
      assert(e.parse(e.default.toString).contains(e.default), e.key)
    }
  }

  test("for every key: option > session > table property > default, in any case in any layer") {
    val cases =
      Seq((camel _, lower _, upper _), (lower _, upper _, camel _), (upper _, camel _, lower _))
    IndexTablesConf.allEntries.foreach { e =>
      val (hi, lo) = samples(e)
      val other = if (e.default.toString == lo) hi else e.default.toString
      cases.foreach { case (o, s, t) =>
        def get(
            options: Map[String, String],
            session: Map[String, String],
            table: Map[String, String]) =
          IndexTablesOptions(options, session, table).get(e).toString
        assert(
          get(
            Map(o(e.key) -> hi),
            Map(s(e.key) -> lo),
            Map(t(e.key) -> lo)) === e.parse(hi).get.toString,
          e.key)
        assert(
          get(Map.empty, Map(s(e.key) -> hi), Map(t(e.key) -> lo)) === e.parse(hi).get.toString,
          e.key)
        assert(
          get(Map.empty, Map.empty, Map(t(e.key) -> other)) === e.parse(other).get.toString,
          e.key)
        assert(get(Map.empty, Map.empty, Map.empty) === e.default.toString, e.key)
      }
    }
  }

  test("regression: a camelCase session key no longer beats a lower-cased write option") {
    // DataFrame options reach the plugin lower-cased; the session keeps the case it was given.
    val opts = IndexTablesOptions(
      options = Map(
        "spark.indextables.state.entriespermanifest" -> "7",
        "spark.indextables.transaction.retry.maxattempts" -> "3"),
      sessionConf = Map(
        "spark.indextables.state.entriesPerManifest" -> "1000",
        "spark.indextables.transaction.retry.maxAttempts" -> "50")
    )
    assert(opts.logSettings.stateEntriesPerManifest === 7)
    assert(opts.logSettings.retryMaxAttempts === 3)
  }

  test("every log key reaches its own field of the log settings") {
    val defaults = IndexTablesOptions.Defaults.logSettings.productIterator.toSeq
    val logEntries = IndexTablesConf.allEntries.filter { e =>
      IndexTablesOptions(Map(e.key -> samples(e)._1)).logSettings.productIterator.toSeq != defaults
    }
    assert(logEntries.size === defaults.size, "each LogSettings field has exactly one key")
    val changed = logEntries.map { e =>
      val s = IndexTablesOptions(Map(e.key -> samples(e)._1)).logSettings.productIterator.toSeq
      s.zip(defaults).zipWithIndex.collect { case ((a, b), i) if a != b => i }
    }
    assert(changed.forall(_.size == 1))
    assert(changed.flatten.distinct.size === defaults.size)
  }

  test("an invalid value fails with INDEXTABLES_INVALID_OPTION naming the key, value and what is expected") {
    val bad = Seq(
      IndexTablesConf.CheckpointInterval -> "0",
      IndexTablesConf.RetryBaseDelayMs -> "-1",
      IndexTablesConf.CompactionTombstoneThreshold -> "NaN",
      IndexTablesConf.CheckpointEnabled -> "yes",
      IndexTablesConf.StateFormat -> "parquet",
      IndexTablesConf.MaxRowsPerSplit -> "many",
      IndexTablesConf.SplitsPerTask -> "0",
      IndexTablesConf.SplitsPerTask -> "some"
    )
    bad.foreach { case (e, v) =>
      val ex = intercept[IndexTablesException](IndexTablesOptions(Map(lower(e.key) -> v)).get(e))
      assert(ex.getErrorClass === "INDEXTABLES_INVALID_OPTION")
      assert(
        ex.getMessage.contains(e.key) && ex.getMessage.contains(s"'$v'") &&
          ex.getMessage.contains(e.expected),
        ex.getMessage)
    }
  }

  test("typemap entries follow the same precedence, and only Hadoop fs options key the log cache") {
    val opts = IndexTablesOptions(
      options = Map(
        "spark.indextables.indexing.typemap.msg" -> "TEXT",
        "fs.s3a.endpoint" -> "e",
        "__indextables.indexquery.key" -> "k",
        "spark.indextables.read.batchSize" -> "9"),
      sessionConf = Map(
        "spark.indextables.indexing.typemap.MSG" -> "json",
        "spark.indextables.indexing.typemap.host" -> "string"),
      tableProps = Map("spark.indextables.indexing.typemap.host" -> "text")
    )
    assert(IndexingRequest.resolve(opts).typemap === Map("msg" -> "text", "host" -> "string"))
    assert(opts.fileSystemOptions === Map("fs.s3a.endpoint" -> "e"))
    // The per-query IndexQuery key never reaches Hadoop's configuration, so equal settings
    // give equal configurations (and one decoded copy per executor) from query to query.
    assert(!opts.hadoopOptions.contains("__indextables.indexquery.key"))
    assert(opts.hadoopOptions.contains("fs.s3a.endpoint"))
    assert(IndexQueryRegistry.KeyOption.startsWith(IndexTablesOptions.InternalPrefix))
  }

  test("the indexing request reads per-column and list forms, and lists whole per layer") {
    val opts = IndexTablesOptions(
      options = Map(
        "spark.indextables.indexing.typemap.text" -> "Message, title",
        "spark.indextables.indexing.typemap.text_col" -> "json",
        "spark.indextables.indexing.typemap.addr" -> "ipaddr",
        "spark.indextables.indexing.tokenizer.en_stem" -> "title",
        "spark.indextables.indexing.tokenizer.body" -> "whitespace",
        "spark.indextables.indexing.fastfields" -> "a, b"
      ),
      sessionConf = Map("spark.indextables.indexing.fastfields" -> "c"),
      tableProps = Map(
        "spark.indextables.indexing.typemap.text" -> "json",
        "spark.indextables.indexing.indexonlyfields" -> "d")
    )
    val r = IndexingRequest.resolve(opts)
    // typemap.text=json in the table is a column named "text"; the option's list form wins for
    // the columns it names.
    assert(r.typemap === Map(
      "message" -> "text",
      "title" -> "text",
      "text_col" -> "json",
      "addr" -> "ip",
      "text" -> "json"))
    assert(r.tokenizers === Map("title" -> "en_stem", "body" -> "whitespace"))
    assert(r.fast === Set("a", "b"))
    assert(r.indexOnly === Set("d"))
    assert(r.keyFor("body") === "spark.indextables.indexing.tokenizer.body")
  }

  test("sizes take binary units; aliases are read, and their errors name them") {
    import ConfEntry.parseBytes
    assert(parseBytes("100M") === Some(100L << 20))
    assert(parseBytes("1g") === Some(1L << 30))
    assert(parseBytes("512 k") === Some(512L << 10))
    assert(parseBytes("268435456") === Some(268435456L))
    assert(Seq("100MB", "1.5G", "-1", "", "M").forall(parseBytes(_).isEmpty))
    val heap = IndexTablesOptions(Map("spark.indextables.indexWriter.heapSize" -> "1G"))
    assert(heap.get(IndexTablesConf.WriterHeapSize) === (1L << 30))
    val alias = IndexTablesOptions(Map("spark.indextables.write.arrowFfi.batchSize" -> "0"))
    val ex = intercept[IndexTablesException](alias.get(IndexTablesConf.ArrowBatchRows))
    assert(ex.getMessage.contains("spark.indextables.write.arrowFfi.batchSize"), ex.getMessage)
    val both = IndexTablesOptions(
      Map("spark.indextables.write.arrowFfi.batchSize" -> "5"),
      sessionConf = Map("spark.indextables.write.arrow.batchSize" -> "7"))
    assert(both.get(IndexTablesConf.ArrowBatchRows) === 5)
  }

  test("an unknown spark.indextables key fails naming the closest keys, unless not strict") {
    val write = Map("spark.indextables.maxrowspersplt" -> "5", "other.key" -> "x")
    val ex = intercept[IndexTablesException](
      IndexTablesOptions.checkWriteOptions(write, IndexTablesOptions(write)))
    assert(ex.getMessage.contains("spark.indextables.maxRowsPerSplit"), ex.getMessage)
    val lenient = write + ("spark.indextables.write.strictOptions" -> "false")
    IndexTablesOptions.checkWriteOptions(lenient, IndexTablesOptions(lenient))
    val known = Map(
      "spark.indextables.indexing.typemap.x" -> "text",
      "spark.indextables.indexing.fastfields" -> "x",
      "spark.indextables.cache.maxSize" -> "1")
    IndexTablesOptions.checkWriteOptions(known, IndexTablesOptions(known))
  }
}

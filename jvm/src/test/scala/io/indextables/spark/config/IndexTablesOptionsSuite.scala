package io.indextables.spark.config

import java.util.Locale

import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.filters.IndexQueryRegistry

/** The registry and the one resolver: every key's precedence and case, validation, log settings. */
class IndexTablesOptionsSuite extends AnyFunSuite {

  /** Two valid values of `e` that differ from each other (the first differs from the default). */
  private def samples(e: ConfEntry[_]): (String, String) = e.default match {
    case _ if e == IndexTablesConf.SplitsPerTask => ("3", "auto")
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
    assert(opts.typemap === Map("msg" -> "text", "host" -> "string"))
    assert(opts.fileSystemOptions === Map("fs.s3a.endpoint" -> "e"))
    // The per-query IndexQuery key never reaches Hadoop's configuration, so equal settings
    // give equal configurations (and one decoded copy per executor) from query to query.
    assert(!opts.hadoopOptions.contains("__indextables.indexquery.key"))
    assert(opts.hadoopOptions.contains("fs.s3a.endpoint"))
    assert(IndexQueryRegistry.KeyOption.startsWith(IndexTablesOptions.InternalPrefix))
  }
}

package io.indextables.spark.read

import java.io.File
import java.nio.file.Files

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.functions.{col, expr}
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.roaringbitmap.RoaringBitmap

import io.indextables.spark.IndexTablesTestBase
import io.indextables.spark.config.IndexTablesOptions
import io.indextables.spark.extensions.ExtensionsSession
import io.indextables.spark.read.aggregate.{DeletedDocValues, IndexTables4SparkAggregateReader}
import io.indextables.spark.schema.{IndexKind, IndexedField}
import io.indextables.spark.transaction.{AddAction, DeletionVectorDescriptor, TableFeatures, TransactionLog}
import io.indextables.spark.write.DeletionCommit

/**
 * Every read route honours deletion vectors, on both layouts: rows are deleted as a DELETE
 * deletes them (their `_split` and `_doc` read by a scan, committed by [[DeletionCommit]]), and
 * every answer is compared with the same query over Parquet files holding the surviving rows.
 */
class DeletionVectorReadSuite extends IndexTablesTestBase {
  import scala.jdk.CollectionConverters._

  override protected lazy val spark: SparkSession = ExtensionsSession.create("deletion-vectors")

  private val schema = StructType(Seq(
    StructField("id", LongType),
    StructField("i", IntegerType),
    StructField("s", StringType),
    StructField("msg", StringType),
    StructField("d", DoubleType),
    StructField("p", StringType)
  ))

  private def rows(n: Int): Seq[Row] = (0 until n).map { k =>
    Row(
      k.toLong,
      if (k % 11 == 5) null else k % 97,
      s"user${k % 13}",
      s"the quick fox $k jumps ${if (k % 10 == 0) "rarely" else "often"}",
      k * 0.5,
      s"p${k % 2}")
  }

  private lazy val source: DataFrame = spark.createDataFrame(rows(400).asJava, schema)

  /** A table of the layout, written as 4 appends (so 8 splits over 2 partitions). */
  private def table(layout: String): String = {
    val path = tablePath(s"t-$layout-${System.nanoTime()}")
    (0 until 4).foreach { k =>
      source.filter(col("id") % 4 === k).write.format("indextables").mode("append")
        .option("spark.indextables.write.layout", layout)
        .option("spark.indextables.indexing.typemap.msg", "text")
        .partitionBy("p")
        .save(path)
    }
    path
  }

  private def log(path: String): TransactionLog = {
    TransactionLog.clearCache()
    TransactionLog.forTable(
      path,
      spark.sessionState.newHadoopConf(),
      IndexTablesOptions.Defaults.logSettings)
  }

  /** Deletes the rows `condition` selects, as a DELETE does; the number deleted. */
  private def delete(path: String, condition: String): Long = {
    val base = log(path).snapshot()
    val hits = spark.read.format("indextables").option("versionAsOf", base.version.toString)
      .load(path).where(condition).select("_split", "_doc").collect()
    val bitmaps = hits.groupBy(_.getString(0)).map { case (split, rs) =>
      split -> RoaringBitmap.bitmapOf(rs.map(_.getLong(1).toInt): _*)
    }
    DeletionCommit.commit(log(path), base, path, "DELETE", Map("predicate" -> condition), bitmaps)
      .deletedRows
  }

  private def read(path: String): DataFrame = {
    TransactionLog.clearCache()
    spark.read.format("indextables").load(path)
  }

  private def sorted(df: DataFrame): Seq[String] = df.collect().map(_.toString).sorted.toSeq

  /** Spark's twin of a condition: the one text query used here is a substring. */
  private def twin(sql: String): String =
    sql.replace("msg indexquery 'rarely'", "msg LIKE '%rarely%'")

  /** The source rows that survive the deletes `deleted`. */
  private def surviving(deleted: Seq[String]): DataFrame =
    deleted.foldLeft(source)((df, c) => df.where(s"NOT coalesce(${twin(c)}, false)"))

  /** The same SQL over the table and over Parquet rows that survive `deleted`. */
  private def same(path: String, deleted: Seq[String], sql: String): String = {
    read(path).createOrReplaceTempView("t")
    val got = spark.sql(sql)
    val plan = executedPlan(got)
    val answer = sorted(got)
    surviving(deleted).createOrReplaceTempView("t")
    val expected = sorted(spark.sql(twin(sql)))
    assert(answer == expected, s"$sql\n$plan")
    plan
  }

  Seq("splits", "companion").foreach { layout =>
    test(s"$layout: scans, searches, LIMIT and every aggregate route leave deleted rows out") {
      val path = table(layout)
      val deleted = Seq("s = 'user3'", "msg indexquery 'rarely' AND i > 50", "id < 7")
      assert(delete(path, deleted(0)) == source.where(deleted(0)).count())
      delete(path, deleted(1))
      assert(delete(path, deleted(2)) == 7 - 1) // id 3 is user3's, deleted already
      val snap = log(path).snapshot()
      assert(TableFeatures.hasDeletionVectors(snap.protocol))
      assert(snap.allFiles.forall(_.deletionVector.isDefined))

      // A companion table's splits have docs in row order: the Parquet route skips deleted rows
      // by position, in columnar batches, and in rows (with a pushed IS NOT NULL).
      val scan = same(path, deleted, "SELECT * FROM t")
      assert(scan.contains("Route: parquet") == (layout == "companion"), scan)
      assert(
        snap.allFiles.forall(_.companionDocsInRowOrder.contains(true)) == (layout == "companion"))
      val nonNull = same(path, deleted, "SELECT id, i, msg FROM t WHERE i IS NOT NULL")
      assert(nonNull.contains("Route: parquet") == (layout == "companion"), nonNull)
      same(path, deleted, "SELECT id, d FROM t WHERE d > 100")
      same(path, deleted, "SELECT id, msg FROM t WHERE i > 60")
      same(path, deleted, "SELECT id FROM t WHERE msg indexquery 'rarely'")
      same(path, deleted, "SELECT id FROM t WHERE s = 'user3'")
      val count = same(path, deleted, "SELECT COUNT(*) FROM t")
      assert(count.contains("AnsweredFromLog: true"), count)
      val partitionCount = same(path, deleted, "SELECT p, COUNT(*) FROM t GROUP BY p")
      assert(partitionCount.contains("AnsweredFromLog: true"), partitionCount)
      // MIN(id) from the log would be 0, a deleted row's: the splits answer.
      same(path, deleted, "SELECT MIN(id), MAX(id) FROM t")
      same(path, deleted, "SELECT MIN(id), MAX(id) FROM t WHERE p = 'p1'")
      val pushed = same(path, deleted, "SELECT COUNT(*) FROM t WHERE i > 20")
      assert(pushed.contains("PushedAggregation"), pushed)
      same(path, deleted, "SELECT COUNT(*) FROM t WHERE msg indexquery 'rarely'")
      val grouped = same(
        path,
        deleted,
        "SELECT s, COUNT(*), SUM(i), MIN(d), MAX(d), AVG(i), COUNT(i) FROM t GROUP BY s")
      assert(grouped.contains("PushedAggregation"), grouped)
      same(path, deleted, "SELECT p, SUM(id), COUNT(*) FROM t WHERE i < 40 GROUP BY p")
      // Without a filter every doc of a split matches: tantivy's aggregation of all its docs,
      // less its deleted docs' values, answers where that is exact (a deleted doc holding a
      // group's MAX makes that split aggregate its rows instead); user3's group is gone.
      val answered = IndexTables4SparkAggregateReader.LessDeletedAnswers.get()
      val less =
        same(path, deleted, "SELECT s, COUNT(*), COUNT(i), SUM(id), MAX(id) FROM t GROUP BY s")
      assert(less.contains("PushedAggregation"), less)
      assert(IndexTables4SparkAggregateReader.LessDeletedAnswers.get() > answered)
      same(path, deleted, "SELECT COUNT(i), SUM(i), MIN(id), MAX(d) FROM t")
      same(path, deleted, "SELECT p, MIN(i), MAX(i), SUM(d) FROM t GROUP BY p")

      // A LIMIT is filled from surviving rows, however many of the first docs are deleted.
      val limited = read(path).where("p = 'p0'").limit(5).collect()
      assert(limited.length == 5)
      assert(limited.forall(r => r.getLong(0) >= 7 && r.getString(2) != "user3"))
      assert(read(path).where("i > 0").limit(3).collect().map(_.getLong(0)).forall(_ >= 7))

      // The metadata columns name each surviving row once.
      val located = read(path).select("_split", "_doc", "id").collect()
      val alive = surviving(deleted)
      assert(located.length == alive.count())
      assert(sorted(alive.select("id")) == located.map(r =>
        Row(r.getLong(2)).toString).sorted.toSeq)
      assert(located.map(r => (r.getString(0), r.getLong(1))).distinct.length == located.length)

      // An earlier version shows the rows again.
      val before = spark.read.format("indextables").option("versionAsOf", "3").load(path)
      assert(before.count() == 400 && before.where("id < 7").count() == 7)

      // DESCRIBE reports the vectors.
      val state = spark.sql(s"DESCRIBE INDEXTABLES STATE '$path'").collect().head
      val expectedRows = source.count() - read(path).count()
      assert(state.getAs[Long]("num_deleted_rows") == expectedRows)
      assert(state.getAs[Long]("num_deletion_vectors") == 8L)
      assert(state.getAs[Long]("num_records") == 400L - expectedRows)
    }

    test(s"$layout: a split left without a row is removed; MERGE SPLITS drops deleted rows") {
      val path = table(layout)
      val before = log(path).snapshot().allFiles
      // Every row of one split: its entry goes, no vector is written for it.
      val first = before.head
      val ids = read(path).select("_split", "id").collect().filter(_.getString(0) == first.path)
        .map(_.getLong(1))
      val cond = s"id IN (${ids.mkString(",")})"
      assert(delete(path, cond) == ids.length)
      val after = log(path).snapshot().allFiles
      assert(after.map(_.path) == before.map(_.path).tail)
      assert(after.forall(_.deletionVector.isEmpty))
      same(path, Seq(cond), "SELECT * FROM t")

      delete(path, "id % 5 = 1")
      val vectors = log(path).snapshot().allFiles.filter(_.deletionVector.isDefined)
      assert(vectors.nonEmpty)
      val beforeMerge = log(path).snapshot().version
      val row = spark.sql(s"MERGE SPLITS '$path' TARGET SIZE 100M").collect().head
      assert(row.getStruct(1).getString(5).contains(s"rewrote ${vectors.size} splits"))
      // The splits with vectors were written again without their deleted rows, then merged:
      // one split per partition, none with a vector, no deleted row served.
      val merged = log(path).snapshot().allFiles
      assert(merged.forall(_.deletionVector.isEmpty))
      assert(merged.size == 2)
      assert(merged.map(_.numRecords.get).sum == surviving(Seq(cond, "id % 5 = 1")).count())
      same(path, Seq(cond, "id % 5 = 1"), "SELECT * FROM t")
      same(path, Seq(cond, "id % 5 = 1"), "SELECT p, COUNT(*), SUM(i) FROM t GROUP BY p")
      same(path, Seq(cond, "id % 5 = 1"), "SELECT id FROM t WHERE msg indexquery 'rarely'")
      // The version before the merge still reads as it did.
      val old = spark.read.format("indextables").option("versionAsOf", beforeMerge.toString)
        .load(path)
      assert(sorted(old) == sorted(surviving(Seq(cond, "id % 5 = 1"))))
    }
  }

  Seq("splits", "companion").foreach { layout =>
    test(s"$layout: a split's deleted docs' values are fetched once per column and vector") {
      import IndexTables4SparkAggregateReader.{DeletedValuesHits, LessDeletedAnswers}
      val path = table(layout)
      val first = Seq("id % 7 = 3")
      delete(path, first.head)
      // Every split (two partitions, four appends) has a vector.
      assert(log(path).snapshot().allFiles.count(_.deletionVector.isDefined) == 8)
      DeletedDocValues.clear()
      val (hits, answered) = (DeletedValuesHits.get(), LessDeletedAnswers.get())
      val bySkey = same(path, first, "SELECT s, COUNT(*), COUNT(i), SUM(id) FROM t GROUP BY s")
      assert(bySkey.contains("PushedAggregation"), bySkey)
      assert(LessDeletedAnswers.get() == answered + 8)
      // The first aggregation fetched each split's deleted docs' s, i and id.
      assert(DeletedValuesHits.get() == hits)
      assert(DeletedDocValues.usage._1 == 8 * 3)
      // Grouped by another column: each split's deleted values of i and id come from the cache.
      val byI = same(path, first, "SELECT i, COUNT(*), SUM(id) FROM t GROUP BY i")
      assert(byI.contains("PushedAggregation"), byI)
      assert(DeletedValuesHits.get() == hits + 8 * 2)
      assert(LessDeletedAnswers.get() == answered + 16)
      // A column not read yet (d) is fetched, alone; i comes from the cache.
      same(path, first, "SELECT i, COUNT(*), COUNT(d) FROM t GROUP BY i")
      assert(DeletedValuesHits.get() == hits + 8 * 3)
      assert(DeletedDocValues.usage._1 == 8 * 4)

      // A second DELETE writes new vectors: the old vectors' values are not used.
      val both = first :+ "id % 5 = 1"
      delete(path, both(1))
      val again = same(path, both, "SELECT s, COUNT(*), SUM(i), COUNT(d) FROM t GROUP BY s")
      assert(again.contains("PushedAggregation"), again)
      assert(DeletedValuesHits.get() == hits + 8 * 3)
      same(path, both, "SELECT i, COUNT(*), COUNT(d) FROM t GROUP BY i")
      assert(DeletedValuesHits.get() == hits + 8 * 5)
      assert(LessDeletedAnswers.get() > answered + 24)

      // FLUSH SEARCHER CACHE empties it; with no room for them, none is kept, and the answers
      // are the same.
      assert(DeletedDocValues.usage._1 > 0)
      spark.sql("FLUSH INDEXTABLES SEARCHER CACHE").collect()
      assert(DeletedDocValues.usage == ((0, 0L)))
      spark.conf.set("spark.indextables.cache.deletedValues.maxSize", "0")
      try {
        same(path, both, "SELECT s, COUNT(*), SUM(i) FROM t GROUP BY s")
        same(path, both, "SELECT s, COUNT(*), SUM(i) FROM t GROUP BY s")
        assert(DeletedValuesHits.get() == hits + 8 * 5)
        assert(DeletedDocValues.usage == ((0, 0L)))
      } finally spark.conf.unset("spark.indextables.cache.deletedValues.maxSize")
    }
  }

  test("the deleted docs' values cache keeps the most recently used within its bytes") {
    def vector(n: Int) = DeletionVectorDescriptor("r", s"dv$n.bin", Some(1), 10, 2L)
    val field = IndexedField("s", StringType, IndexKind.RawString)
    def key(split: String, n: Int, f: IndexedField = field) =
      DeletedDocValues.Key("/t", split, vector(n), f)
    def values(s: String) =
      new DeletedDocValues.Values(Array[Any](UTF8String.fromString(s), null))
    val one = values("x" * 100)
    val max = one.bytes * 2
    DeletedDocValues.clear()
    DeletedDocValues.put(key("a", 1), one, max)
    DeletedDocValues.put(key("a", 2), values("y" * 100), max)
    assert(DeletedDocValues.get(key("a", 1)).contains(one)) // now the most recently used
    DeletedDocValues.put(key("a", 3), values("z" * 100), max)
    assert(DeletedDocValues.get(key("a", 2)).isEmpty)
    assert(DeletedDocValues.get(key("a", 1)).isDefined && DeletedDocValues.get(key(
      "a",
      3)).isDefined)
    assert(DeletedDocValues.usage == ((2, max)))
    // Another split, vector or column (or the column read as another kind) is another entry.
    assert(DeletedDocValues.get(key("b", 1)).isEmpty)
    assert(DeletedDocValues.get(key("a", 4)).isEmpty)
    assert(DeletedDocValues.get(key("a", 1, field.copy(name = "t"))).isEmpty)
    assert(DeletedDocValues.get(key("a", 1, field.copy(kind = IndexKind.Text))).isEmpty)
    // Values larger than the bound are not kept.
    DeletedDocValues.put(key("a", 5), values("w" * 1000), max)
    assert(DeletedDocValues.get(key("a", 5)).isEmpty)
    DeletedDocValues.clear()
  }

  test("a damaged or missing vector file fails the read, naming it") {
    val path = table("splits")
    delete(path, "id = 8")
    val entry: AddAction = log(path).snapshot().allFiles.find(_.deletionVector.isDefined).get
    val file = new File(path, entry.deletionVector.get.pathOrInlineDv)
    val bytes = Files.readAllBytes(file.toPath)
    bytes(bytes.length - 6) = (bytes(bytes.length - 6) ^ 1).toByte
    Files.write(file.toPath, bytes)
    val e = intercept[Exception](read(path).where(expr("p = 'p0'")).collect())
    val text = Iterator.iterate[Throwable](e)(_.getCause).takeWhile(_ != null).map(_.getMessage)
      .mkString("\n")
    assert(text.contains("INDEXTABLES_DELETION_VECTOR_UNREADABLE"), text)
    assert(text.contains(entry.deletionVector.get.pathOrInlineDv), text)
    file.delete()
    val gone = intercept[Exception](read(path).collect())
    assert(Iterator.iterate[Throwable](gone)(_.getCause).takeWhile(_ != null)
      .exists(t => String.valueOf(t.getMessage).contains("INDEXTABLES_DELETION_VECTOR_UNREADABLE")))
  }
}

package io.indextables.spark.read

import java.sql.{Date, Timestamp}

import org.apache.spark.sql.{DataFrame, Row, SparkSession}
import org.apache.spark.sql.functions.col
import org.apache.spark.sql.types._

import io.indextables.spark.IndexTablesTestBase
import io.indextables.spark.extensions.ExtensionsSession

/**
 * The companion layout end to end in one JVM: every answer of a companion table compared with
 * the same query over Parquet files Spark wrote from the same rows, and the route each scan took
 * read from its description.
 */
class CompanionLayoutSuite extends IndexTablesTestBase {
  import scala.jdk.CollectionConverters._

  override protected lazy val spark: SparkSession = ExtensionsSession.create("companion")

  private val schema = StructType(Seq(
    StructField("id", LongType),
    StructField("i", IntegerType),
    StructField("s", StringType),
    StructField("msg", StringType),
    StructField("d", DoubleType),
    StructField("b", BooleanType),
    StructField("ts", TimestampType),
    StructField("dt", DateType),
    StructField("p", StringType)
  ))

  private def rows(n: Int): Seq[Row] = (0 until n).map { k =>
    if (k % 7 == 3) Row(k.toLong, null, null, null, null, null, null, null, s"p${k % 2}")
    else Row(
      k.toLong,
      k,
      s"value $k",
      s"the quick fox $k jumps ${if (k % 10 == 0) "rarely" else "often"}",
      k * 1.5,
      k % 2 == 0,
      new Timestamp(1700000000000L + k * 1000L + (k % 5) * 123L),
      Date.valueOf(java.time.LocalDate.of(2024, 1, 1).plusDays(k % 30)),
      s"p${k % 2}"
    )
  }

  private lazy val source: DataFrame = spark.createDataFrame(rows(300).asJava, schema)

  private lazy val table: String = {
    val path = tablePath("companion")
    source.write.format("indextables")
      .option("spark.indextables.write.layout", "companion")
      .option("spark.indextables.indexing.typemap.msg", "text")
      .partitionBy("p")
      .save(path)
    path
  }

  private lazy val parquet: String = {
    val path = tablePath("parquet")
    source.write.partitionBy("p").parquet(path)
    path
  }

  private def both(query: DataFrame => DataFrame, onParquet: DataFrame => DataFrame)
      : (DataFrame, Seq[String], Seq[String]) = {
    val it = query(spark.read.format("indextables").load(table))
    val pq = onParquet(spark.read.parquet(parquet))
    val cols = schemaOf(it)
    (
      it,
      it.select(cols.map(col): _*).collect().map(_.toString).sorted.toSeq,
      pq.select(cols.map(col): _*).collect().map(_.toString).sorted.toSeq)
  }

  private def schemaOf(df: DataFrame): Seq[String] = df.schema.fieldNames.toSeq

  private def check(name: String, route: String)(query: DataFrame => DataFrame): Unit =
    checkAgainst(name, route)(query, query)

  private def checkAgainst(name: String, route: String)(
      query: DataFrame => DataFrame,
      onParquet: DataFrame => DataFrame): Unit =
    test(s"$name: the same rows as Parquet, by the $route route") {
      val (df, got, expected) = both(query, onParquet)
      assert(got.size == expected.size)
      assert(got.diff(expected).take(3) == Nil)
      val plan = executedPlan(df)
      if (route == "parquet") assert(plan.contains("Route: parquet"), plan)
      else assert(!plan.contains("Route: parquet"), plan)
    }

  check("a full scan", "parquet")(identity)
  check("a projection", "parquet")(_.select("msg", "id"))
  check("a partition filter", "parquet")(_.filter(col("p") === "p1").select("id", "ts", "p"))
  check("a filter the index cannot answer", "parquet")(_.filter(col("d") % 2 === 0))
  check("an equality on a string", "search")(_.filter(col("s") === "value 11"))
  check("a range on a long", "search")(_.filter(col("id") > 250L))
  check("a range on a timestamp", "search")(
    _.filter(col("ts") >= new Timestamp(1700000000000L + 290 * 1000L)))
  check("a date", "search")(_.filter(col("dt") === Date.valueOf("2024-01-05")))
  check("a boolean and a double", "search")(_.filter(col("b") && col("d") < 30.0))
  check("an IS NULL", "search")(_.filter(col("s").isNull).select("id", "p"))
  checkAgainst("an indexquery", "search")(
    _.filter("msg indexquery 'rarely'"),
    _.filter(col("msg").contains("rarely")))
  checkAgainst("an indexquery phrase", "search")(
    _.filter("msg indexquery '\"fox 21 jumps\"'"),
    _.filter(col("msg").contains("fox 21 jumps")))
  check("only IS NOT NULL", "parquet")(_.filter(col("s").isNotNull))

  test("aggregates match Parquet's") {
    val queries = Seq(
      "SELECT COUNT(*) FROM t",
      "SELECT p, COUNT(*), SUM(id), MIN(d), MAX(ts) FROM t GROUP BY p",
      "SELECT COUNT(*) FROM t WHERE msg indexquery 'rarely'",
      "SELECT b, COUNT(*) FROM t WHERE id > 100 GROUP BY b"
    )
    queries.foreach { q =>
      spark.read.format("indextables").load(table).createOrReplaceTempView("t")
      val got = spark.sql(q).collect().map(_.toString).sorted.toSeq
      spark.read.parquet(parquet).createOrReplaceTempView("t")
      val expected = spark.sql(q.replace("msg indexquery 'rarely'", "msg LIKE '%rarely%'"))
        .collect().map(_.toString).sorted.toSeq
      assert(got == expected, q)
    }
  }

  test("after MERGE SPLITS, a GROUP BY on a string answers as Parquet (Spark aggregates)") {
    val path = tablePath("merged")
    (0 until 4).foreach { k =>
      source.filter(col("id") % 4 === k).coalesce(1).write.format("indextables").mode("append")
        .option("spark.indextables.write.layout", "companion")
        .save(path)
    }
    spark.sql(s"MERGE SPLITS '$path'").collect()
    val q = "SELECT s, p, COUNT(*), SUM(id), MAX(i) FROM t GROUP BY s, p"
    spark.read.format("indextables").load(path).createOrReplaceTempView("t")
    val got = spark.sql(q)
    assert(!executedPlan(got).contains("PushedAggregation"), executedPlan(got))
    val answer = got.collect().map(_.toString).sorted.toSeq
    source.createOrReplaceTempView("t")
    assert(answer == spark.sql(q).collect().map(_.toString).sorted.toSeq)
  }

  test("a limit on each route") {
    val read = spark.read.format("indextables").load(table)
    assert(read.limit(7).collect().length == 7)
    assert(read.filter(col("id") > 10L).limit(5).collect().length == 5)
  }
}

package io.indextables.spark.filters

import org.apache.spark.sql.types._

import io.indextables.spark.IndexTablesTestBase

/**
 * The one partition WHERE clause of MERGE SPLITS, DROP PARTITIONS and the cache commands, on the
 * partition values as the log records them (strings, null for a NULL partition).
 */
class PartitionPredicateSuite extends IndexTablesTestBase {

  private val schema = StructType(Seq(
    StructField("hour", IntegerType),
    StructField("day", DateType),
    StructField("region", StringType),
    StructField("big", LongType),
    StructField("msg", StringType)
  ))
  private val partitions = Seq("hour", "day", "region", "big")

  private final class Refused(val why: String) extends Exception(why)
  private val errors = PartitionPredicate.Errors(
    why => new Refused(s"invalid: $why"),
    columns => new Refused(s"not partition: ${columns.mkString(",")}"))

  private def parse(text: String) =
    PartitionPredicate.parse(spark, text, schema, partitions, "UTC", errors)

  private def values(
      hour: String,
      day: String = "2024-01-01",
      region: String = "eu",
      big: String = "1") =
    Map("hour" -> hour, "day" -> day, "region" -> region, "big" -> big)

  test("numbers compare as numbers, never as strings (upstream issue #85)") {
    val p = parse("hour > 9")
    assert(p.matches(values("10")) && p.matches(values("100")))
    assert(!p.matches(values("9")) && !p.matches(values("2")))
    val b = parse("big BETWEEN 5 AND 10000000000")
    assert(b.matches(values(
      "0",
      big = "9999999999")) && !b.matches(values("0", big = "40")) == false)
    assert(!b.matches(values("0", big = "4")))
    assert(parse("hour IN (1, 10)").matches(values("10")))
  }

  test("a NULL partition is SQL NULL: only IS NULL and null-safe forms match it") {
    assert(parse("hour IS NULL").matches(values(null)))
    assert(!parse("hour IS NULL").matches(values("1")))
    assert(!parse("hour > 0").matches(values(null)))
    assert(!parse("NOT (hour > 0)").matches(values(null)))
    assert(parse("hour <=> NULL").matches(values(null)))
    assert(parse("hour > 0 OR region = 'eu'").matches(values(null)))
    assert(!parse("region = 'eu'").matches(values("1", region = null)))
  }

  test("dates compare as dates") {
    val p = parse("day >= '2024-01-10'")
    assert(p.matches(values("1", day = "2024-02-01")) && !p.matches(values(
      "1",
      day = "2024-01-09")))
    assert(parse("day = DATE'2024-01-01'").matches(values("1")))
    assert(parse("day BETWEEN '2023-12-31' AND '2024-01-01'").matches(values("1")))
    assert(!parse("day < '2024-01-01'").matches(values("1")))
  }

  test("column names ignore case, as Spark resolves them") {
    assert(parse("HOUR = 3 AND Region = 'eu'").matches(values("3")))
  }

  test("a data column, a condition naming no column, or a bad clause is refused clearly") {
    assert(intercept[Refused](parse("msg = 'x'")).why == "not partition: msg")
    assert(intercept[Refused](parse("hour > 3 AND msg = 'x' OR nope = 1")).why ==
      "not partition: msg,nope")
    assert(intercept[Refused](parse("1 = 1")).why.contains("every condition must name"))
    assert(intercept[Refused](parse("hour > 1 AND true")).why.contains("every condition"))
    assert(intercept[Refused](parse("hour >")).why.startsWith("invalid:"))
    assert(intercept[Refused](parse("hour = 'x' + region(1)")).why.startsWith("invalid:"))
  }
}

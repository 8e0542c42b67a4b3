package io.indextables.spark.filters

import java.time.LocalDate

import org.apache.spark.sql.sources._
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.transaction.state.PartitionBounds

/** Manifest-level pruning from partition bounds: never drops a manifest that could match. */
class ManifestPrunerSuite extends AnyFunSuite {

  private val schema = StructType(Seq(
    StructField("region", StringType),
    StructField("day", DateType),
    StructField("bucket", IntegerType),
    StructField("score", DoubleType),
    StructField("msg", StringType)
  ))
  private val pruner = new ManifestPruner(schema, Seq("region", "day", "bucket", "score"))

  private def b(lo: String, hi: String) = PartitionBounds(Some(lo), Some(hi))
  private val manifest = Map(
    "region" -> b("eu-central", "eu-west"),
    "day" -> b("2024-01-10", "2024-01-20"),
    "bucket" -> b("3", "7"),
    "score" -> b("1.5", "2.5"))

  private def keeps(f: Filter*): Boolean = pruner.mayMatch(manifest, f)

  test("string equality, IN and ranges against the bounds") {
    assert(keeps(EqualTo("region", "eu-north")))
    assert(!keeps(EqualTo("region", "us-east")))
    assert(!keeps(EqualTo("region", "eu-a")))
    assert(keeps(In("region", Array("us-east", "eu-west"))))
    assert(!keeps(In("region", Array("us-east", null))))
    assert(keeps(GreaterThan("region", "eu-north")))
    assert(!keeps(GreaterThan("region", "eu-west")))
    assert(keeps(GreaterThanOrEqual("region", "eu-west")))
    assert(!keeps(LessThan("region", "eu-central")))
    assert(keeps(LessThanOrEqual("region", "eu-central")))
    assert(keeps(StringStartsWith("region", "eu-")))
    assert(keeps(StringStartsWith("region", "eu-w")))
    assert(!keeps(StringStartsWith("region", "us")))
    assert(!keeps(StringStartsWith("region", "eu-x")))
  }

  test("dates compare as dates; integers only by equality") {
    assert(keeps(EqualTo("day", java.sql.Date.valueOf("2024-01-15"))))
    assert(!keeps(EqualTo("day", LocalDate.parse("2024-02-01"))))
    assert(!keeps(LessThan("day", LocalDate.parse("2024-01-10"))))
    assert(keeps(LessThanOrEqual("day", LocalDate.parse("2024-01-10"))))
    assert(keeps(EqualTo("bucket", 5)))
    assert(!keeps(EqualTo("bucket", 9)))
    // "10" sorts between "3" and "7" as a string but not as a number: ranges keep the manifest.
    assert(keeps(GreaterThan("bucket", 100)))
    assert(keeps(LessThan("bucket", 1)))
    // Doubles have no single written form: kept.
    assert(keeps(EqualTo("score", 9.0)))
  }

  test("AND, OR, NOT and null comparisons are three-valued") {
    assert(!keeps(And(EqualTo("region", "eu-west"), EqualTo("bucket", 9))))
    assert(keeps(Or(EqualTo("region", "us-east"), EqualTo("bucket", 5))))
    assert(!keeps(Or(EqualTo("region", "us-east"), EqualTo("bucket", 9))))
    assert(keeps(Not(EqualTo("region", "eu-west"))))
    assert(!keeps(EqualTo("region", null)))
    assert(keeps(IsNull("region")), "nulls are not in the bounds")
    assert(keeps(EqualNullSafe("region", null)))
    // Several filters are a conjunction.
    assert(!keeps(EqualTo("region", "eu-west"), EqualTo("bucket", 9)))
  }

  test("unknown or empty bounds, data columns and surrogates keep or skip soundly") {
    assert(pruner.mayMatch(Map.empty, Seq(EqualTo("region", "x"))))
    assert(
      !pruner.mayMatch(
        Map("region" -> PartitionBounds(None, None)),
        Seq(EqualTo("region", "x"))),
      "a manifest whose values are all NULL never equals x")
    assert(keeps(EqualTo("msg", "anything")))
    val astral = new String(Character.toChars(0x1f600))
    assert(keeps(GreaterThan("region", astral)))
    assert(pruner.mayMatch(
      Map("region" -> b("a" + astral, "b")),
      Seq(LessThan("region", "a\uE000"))))
  }
}

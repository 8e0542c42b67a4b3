package io.indextables.spark.filters

import java.time.{Instant, LocalDate}

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.{JsonNode, ObjectMapper}
import org.apache.spark.sql.sources._
import org.apache.spark.sql.types._
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.schema.TableIndexSchema

class FiltersToQueryConverterSuite extends AnyFunSuite {

  private val schema = StructType(Seq(
    StructField("s", StringType),
    StructField("t", StringType),
    StructField("j", StringType),
    StructField("l", LongType),
    StructField("i", IntegerType),
    StructField("d", DoubleType),
    StructField("f", FloatType),
    StructField("dec", DecimalType(10, 2)),
    StructField("b", BooleanType),
    StructField("dt", DateType),
    StructField("ts", TimestampType),
    StructField("bin", BinaryType),
    StructField("st", StructType(Seq(StructField("x", LongType)))),
    StructField("p", StringType)
  ))
  private val indexSchema =
    TableIndexSchema.resolve(schema, Seq("p"), Map("t" -> "text", "j" -> "json"))
  private val converter = new FiltersToQueryConverter(indexSchema)
  private val noTokens = new FiltersToQueryConverter(indexSchema, tokenQueries = false)
  private val mapper = new ObjectMapper()

  private def json(t: TranslatedFilter): JsonNode = mapper.readTree(t.query.toQueryAstJson)

  /** The translation of `f`, which must exist, and its query as parsed JSON. */
  private def tr(f: Filter, c: FiltersToQueryConverter = converter): (Boolean, JsonNode) = {
    val t = c.translate(f)
    assert(t.isDefined, s"$f was not translated")
    (t.get.exact, json(t.get))
  }

  private def exact(f: Filter): JsonNode = { val (e, j) = tr(f); assert(e, s"$f not exact"); j }
  private def superset(f: Filter, c: FiltersToQueryConverter = converter): JsonNode = {
    val (e, j) = tr(f, c); assert(!e, s"$f exact"); j
  }
  private def refused(f: Filter, c: FiltersToQueryConverter = converter): Unit =
    assert(
      c.translate(f).isEmpty,
      s"$f was translated: ${c.translate(f).map(_.query.toQueryAstJson)}")

  private def assertTerm(j: JsonNode, field: String, value: String): Unit = {
    assert(j.get("type").asText === "term", j)
    assert(j.get("field").asText === field && j.get("value").asText === value, j)
  }

  private def bound(j: JsonNode, side: String): (String, String) = j.get(side) match {
    case b if b.isTextual => (b.asText, null)
    case b => val k = b.fieldNames().next(); (k, b.get(k).asText)
  }

  private def assertRange(
      j: JsonNode,
      field: String,
      lower: (String, String),
      upper: (String, String)): Unit = {
    assert(j.get("type").asText === "range" && j.get("field").asText === field, j)
    assert(bound(j, "lower_bound") === lower, j)
    assert(bound(j, "upper_bound") === upper, j)
  }
  private val Unbounded = ("Unbounded", null)

  // ---- equality and IN ----

  test("equality on raw string, integer and boolean columns is an exact term query") {
    assertTerm(exact(EqualTo("s", "Hello World")), "s", "Hello World")
    assertTerm(exact(EqualTo("l", 42L)), "l", "42")
    assertTerm(exact(EqualTo("i", -7)), "i", "-7")
    assertTerm(exact(EqualTo("b", true)), "b", "true")
    assertTerm(exact(EqualNullSafe("s", "x")), "s", "x")
  }

  test("null-safe equality with null is not translated") {
    refused(EqualNullSafe("s", null))
    refused(EqualNullSafe("l", null))
  }

  test("equality with a value of the wrong type is not translated") {
    refused(EqualTo("l", "42"))
    refused(EqualTo("s", 42))
    refused(EqualTo("b", "true"))
  }

  test("double and float equality is an exact single-point range") {
    assertRange(exact(EqualTo("d", 1.5)), "d", ("Included", "1.5"), ("Included", "1.5"))
    assertRange(exact(EqualTo("f", 0.5f)), "f", ("Included", "0.5"), ("Included", "0.5"))
  }

  test("floating equality with zero, NaN or infinity is refused") {
    Seq(0.0, -0.0, Double.NaN, Double.PositiveInfinity, Double.NegativeInfinity).foreach { v =>
      refused(EqualTo("d", v))
    }
    Seq(0.0f, Float.NaN, Float.PositiveInfinity).foreach(v => refused(EqualTo("f", v)))
  }

  test("date equality is an exact range on the day's midnight in UTC") {
    val j = exact(EqualTo("dt", java.sql.Date.valueOf("2024-02-29")))
    assertRange(j, "dt", ("Included", "2024-02-29T00:00:00Z"), ("Included", "2024-02-29T00:00:00Z"))
    assertRange(
      exact(EqualTo("dt", LocalDate.parse("1969-07-20"))),
      "dt",
      ("Included", "1969-07-20T00:00:00Z"),
      ("Included", "1969-07-20T00:00:00Z"))
  }

  test("timestamp equality is a superset: the whole second holding the value") {
    val j = superset(EqualTo("ts", Instant.parse("2024-01-01T00:00:00.250Z")))
    assertRange(j, "ts", ("Included", "2024-01-01T00:00:00Z"), ("Excluded", "2024-01-01T00:00:01Z"))
    val before = superset(EqualTo("ts", Instant.parse("1969-12-31T23:59:59.5Z")))
    assertRange(
      before,
      "ts",
      ("Included", "1969-12-31T23:59:59Z"),
      ("Excluded", "1970-01-01T00:00:00Z"))
    superset(EqualTo("ts", java.sql.Timestamp.from(Instant.parse("2024-01-01T00:00:00Z"))))
  }

  test("decimal, binary, struct and json columns get no equality query") {
    refused(EqualTo("dec", new java.math.BigDecimal("1.50")))
    refused(EqualTo("dec", 1.5))
    refused(EqualTo("bin", Array[Byte](1, 2)))
    refused(EqualTo("st", 1L))
    refused(EqualTo("j", "{\"a\":1}"))
    refused(In("dec", Array[Any](new java.math.BigDecimal("1.50"))))
  }

  test("IN on a raw string or an integer is one exact term set, nulls and repeats dropped") {
    val l = exact(In("l", Array[Any](1L, null, 3L, 1L)))
    assert(l.get("type").asText === "term_set", l)
    assert(l.get("terms_per_field").get("l").elements().asScala.map(_.asText).toList ===
      List("1", "3"))
    val str = exact(In("s", Array[Any]("a", "b")))
    assert(str.get("terms_per_field").get("s").elements().asScala.map(_.asText).toList ===
      List("a", "b"))
    // One value is a should clause of one term query, as `=` is.
    assertTerm(exact(In("l", Array[Any](7L, null))).get("should").get(0), "l", "7")
  }

  test("IN on other kinds is a bool of should clauses, exact when every value is") {
    val ts = superset(In("ts", Array[Any](Instant.parse("2024-01-01T00:00:00Z"))))
    assert(ts.get("should").get(0).get("type").asText === "range")
    val b = exact(In("b", Array[Any](true, false)))
    assert(b.get("type").asText === "bool" && b.get("should").size === 2, b)
  }

  test("IN with an untranslatable value, or only nulls, is refused") {
    refused(In("d", Array[Any](1.0, 0.0)))
    refused(In("s", Array[Any](null)))
    refused(In("s", Array[Any]()))
  }

  // ---- null checks ----

  test("IS NOT NULL is an exact field-presence query on fast fields") {
    Seq("s", "l", "i", "d", "f", "dec", "b", "dt", "ts").foreach { c =>
      val j = exact(IsNotNull(c))
      assert(j.get("type").asText === "field_presence" && j.get("field").asText === c, j)
    }
  }

  test("IS NULL is an exact match-all minus field presence") {
    val j = exact(IsNull("l"))
    assert(j.get("type").asText === "bool")
    assert(j.get("must").get(0).get("type").asText === "match_all")
    val not = j.get("must_not").get(0)
    assert(not.get("type").asText === "field_presence" && not.get("field").asText === "l")
  }

  test("null checks on text, json, binary and struct columns are refused") {
    Seq("t", "j", "bin", "st").foreach { c =>
      refused(IsNotNull(c))
      refused(IsNull(c))
    }
  }

  // ---- ranges ----

  test("ranges on raw strings, integers and dates are exact with matching bound kinds") {
    assertRange(exact(GreaterThan("l", 3L)), "l", ("Excluded", "3"), Unbounded)
    assertRange(exact(GreaterThanOrEqual("i", 3)), "i", ("Included", "3"), Unbounded)
    assertRange(exact(LessThan("s", "m")), "s", Unbounded, ("Excluded", "m"))
    assertRange(
      exact(LessThanOrEqual("dt", LocalDate.parse("2024-01-02"))),
      "dt",
      Unbounded,
      ("Included", "2024-01-02T00:00:00Z"))
  }

  test("floating ranges are exact where the splits order NaN as Spark does") {
    val ordered =
      new FiltersToQueryConverter(indexSchema.copy(exactFloatRanges = Set("d", "f")))
    def exactIn(f: Filter) = { val (e, j) = tr(f, ordered); assert(e, s"$f not exact"); j }
    assertRange(exactIn(GreaterThan("d", 1.0)), "d", ("Excluded", "1.0"), Unbounded)
    assertRange(exactIn(GreaterThanOrEqual("f", 1.0f)), "f", ("Included", "1.0"), Unbounded)
    assertRange(exactIn(LessThan("d", 2.0)), "d", Unbounded, ("Excluded", "2.0"))
  }

  test("elsewhere floating ranges are supersets: a NaN with the sign bit sorts below numbers") {
    // With an upper bound, the range holds such a NaN too, which Spark leaves out.
    assertRange(superset(LessThan("d", 2.0)), "d", Unbounded, ("Excluded", "2.0"))
    assertRange(superset(LessThanOrEqual("f", 2.5f)), "f", Unbounded, ("Included", "2.5"))
    // Without one, the values below every number are added (Spark takes such a NaN as TRUE).
    val j = superset(GreaterThan("d", 1.0))
    assert(j.get("type").asText === "bool", j)
    val should = j.get("should")
    assert(should.size === 2, j)
    assertRange(should.get(0), "d", ("Excluded", "1.0"), Unbounded)
    assertRange(should.get(1), "d", Unbounded, ("Excluded", (-Double.MaxValue).toString))
  }

  test("floating ranges with an infinite bound are refused: a query cannot name it") {
    refused(LessThan("d", Double.PositiveInfinity))
    refused(GreaterThan("d", Double.NegativeInfinity))
    refused(GreaterThanOrEqual("f", Float.NegativeInfinity))
  }

  test("floating ranges with a zero or NaN bound are refused") {
    refused(LessThan("d", 0.0))
    refused(LessThanOrEqual("d", -0.0))
    refused(LessThan("d", Double.NaN))
    refused(LessThan("f", Float.NaN))
    val (q, pushed, post) =
      converter.translateConjuncts(Seq(GreaterThan("d", 0.0), LessThan("d", 5.0)))
    assert(q.isEmpty && pushed.isEmpty)
    assert(post.toSet === Set(GreaterThan("d", 0.0), LessThan("d", 5.0)))
  }

  test("timestamp ranges are supersets widened outward to whole seconds") {
    assertRange(
      superset(GreaterThan("ts", Instant.parse("2024-01-01T00:00:00.7Z"))),
      "ts",
      ("Included", "2024-01-01T00:00:00Z"),
      Unbounded)
    assertRange(
      superset(LessThan("ts", Instant.parse("2024-01-01T00:00:00.2Z"))),
      "ts",
      Unbounded,
      ("Included", "2024-01-01T00:00:01Z"))
    assertRange(
      superset(LessThanOrEqual("ts", Instant.parse("2024-01-01T00:00:05Z"))),
      "ts",
      Unbounded,
      ("Included", "2024-01-01T00:00:05Z"))
  }

  test("timestamp >= and < a whole second after 1970 are exact, the others are not") {
    assertRange(
      exact(GreaterThanOrEqual("ts", Instant.parse("2024-01-01T00:00:00Z"))),
      "ts",
      ("Included", "2024-01-01T00:00:00Z"),
      Unbounded)
    assertRange(
      exact(LessThan("ts", Instant.parse("2024-01-02T00:00:00Z"))),
      "ts",
      Unbounded,
      ("Excluded", "2024-01-02T00:00:00Z"))
    superset(GreaterThan("ts", Instant.parse("2024-01-01T00:00:00Z")))
    superset(LessThan("ts", Instant.parse("2024-01-02T00:00:00.5Z")))
    // At or before the epoch, a truncated negative value could cross the bound.
    superset(GreaterThanOrEqual("ts", Instant.parse("1970-01-01T00:00:00Z")))
    superset(LessThan("ts", Instant.parse("1969-12-31T00:00:00Z")))
  }

  test("ranges on booleans, decimals, binary, json and struct columns are refused") {
    refused(GreaterThan("b", false))
    refused(LessThan("dec", new java.math.BigDecimal("1")))
    refused(LessThan("bin", Array[Byte](1)))
    refused(LessThan("j", "a"))
    refused(GreaterThan("st", 1L))
  }

  // ---- text columns ----

  test("equality on a text column is a lower-cased token query, never exact") {
    assertTerm(superset(EqualTo("t", "Hello")), "t", "hello")
    val phrase = superset(EqualTo("t", "Hello, big World"))
    assert(phrase.get("type").asText === "full_text" && phrase.get("field").asText === "t", phrase)
    assert(phrase.get("text").asText === "hello big world", phrase)
    assert(phrase.get("params").get("mode").get("type").asText === "phrase", phrase)
  }

  test("text equality with non-ASCII characters or without any token is refused") {
    refused(EqualTo("t", "café"))
    refused(EqualTo("t", "---"))
    refused(EqualTo("t", ""))
  }

  test("substring filters on a text column are lower-cased wildcards over tokens, supersets") {
    assert(superset(StringStartsWith("t", "Ab1")).get("value").asText === "ab1*")
    assert(superset(StringEndsWith("t", "XY")).get("value").asText === "*xy")
    val j = superset(StringContains("t", "mid"))
    assert(j.get("type").asText === "wildcard" && j.get("value").asText === "*mid*", j)
  }

  test("substring filters on text that could span tokens are refused") {
    refused(StringStartsWith("t", "a b"))
    refused(StringStartsWith("t", "é"))
    refused(StringEndsWith("t", ""))
    refused(StringContains("t", "é b"))
    refused(StringContains("t", " - "))
  }

  test("a multi-word contains on text is a superset: the phrase of its inner words alone") {
    // Two inner words make a phrase: the edge words add no wildcards.
    val j = superset(StringContains("t", "Session closed for User"))
    assert(
      j.get("type").asText === "full_text" && j.get("text").asText === "closed for",
      j)
    assert(j.get("params").get("mode").get("type").asText === "phrase", j)
    // One inner word keeps the edge wildcards beside its term.
    val one = superset(StringContains("t", "Session closed User"))
    val must = one.get("must").elements().asScala.toSeq
    assert(one.get("type").asText === "bool" && must.size === 3, one)
    assert(must(0).get("type").asText === "term" && must(0).get("value").asText === "closed", one)
    assert(
      must(1).get("type").asText === "wildcard" && must(1).get("value").asText === "*session",
      one)
    assert(
      must(2).get("type").asText === "wildcard" && must(2).get("value").asText === "user*",
      one)
    // A needle delimited on both sides is made of whole tokens only.
    val whole = superset(StringContains("t", " peer reset: "))
    assert(
      whole.get("type").asText === "full_text" && whole.get("text").asText === "peer reset",
      whole)
    assertTerm(superset(StringContains("t", "=blk=")), "t", "blk")
    // Two partial edges and nothing between: both wildcards.
    val edges = superset(StringContains(
      "t",
      "ab-cd")).get("must").elements().asScala.map(_.get("value").asText)
    assert(edges.toSeq === Seq("*ab", "cd*"))
    refused(StringContains("t", "a b"), noTokens)
  }

  test("text columns never give an exact translation, nor ranges or null checks") {
    val filters = Seq[Filter](
      EqualTo("t", "a"),
      EqualTo("t", "a b c"),
      EqualNullSafe("t", "a"),
      In("t", Array[Any]("a", "b")),
      StringStartsWith("t", "a"),
      StringEndsWith("t", "a"),
      StringContains("t", "a"),
      GreaterThan("t", "a"),
      LessThan("t", "z"),
      IsNull("t"),
      IsNotNull("t"),
      And(EqualTo("t", "a"), EqualTo("l", 1L)),
      Or(EqualTo("t", "a"), EqualTo("s", "a")),
      Not(EqualTo("t", "a"))
    )
    filters.foreach(f => converter.translate(f).foreach(t => assert(!t.exact, f)))
    Seq(GreaterThan("t", "a"), LessThanOrEqual("t", "z")).foreach(refused(_))
    assert(filters.exists(f => converter.translate(f).isDefined))
  }

  test("with token queries off, text columns get no token queries at all") {
    Seq[Filter](
      EqualTo("t", "hello"),
      EqualTo("t", "hello world"),
      StringStartsWith("t", "he"),
      StringEndsWith("t", "lo"),
      StringContains("t", "ll"),
      In("t", Array[Any]("a"))
    )
      .foreach(refused(_, noTokens))
    // Other columns are unaffected.
    assertTerm(tr(EqualTo("s", "x"), noTokens)._2, "s", "x")
    superset(StringStartsWith("s", "x"), noTokens)
    // AND with an untranslated text side keeps only the other side.
    val (e, j) = tr(And(EqualTo("t", "hello"), EqualTo("l", 1L)), noTokens)
    assert(!e)
    assertTerm(j, "l", "1")
  }

  // ---- raw string wildcards ----

  test("substring filters on a raw string are wildcard supersets of the whole value") {
    val j = superset(StringStartsWith("s", "Ab"))
    assert(j.get("type").asText === "wildcard" && j.get("field").asText === "s")
    assert(j.get("value").asText === "Ab*")
    assert(superset(StringEndsWith("s", "z")).get("value").asText === "*z")
    assert(superset(StringContains("s", "a b")).get("value").asText === "*a b*")
  }

  test("raw string patterns holding wildcard characters, or empty, are refused") {
    Seq("a*", "?", "back\\slash", "").foreach { v =>
      refused(StringStartsWith("s", v))
      refused(StringContains("s", v))
    }
  }

  // ---- boolean combinations ----

  test("AND of two exact filters is an exact bool of musts") {
    val j = exact(And(EqualTo("s", "a"), GreaterThan("l", 1L)))
    assert(j.get("type").asText === "bool" && j.get("must").size === 2, j)
  }

  test("AND with one untranslatable side keeps the other side, as a superset") {
    assertTerm(superset(And(EqualTo("s", "a"), EqualTo("dec", 1.0))), "s", "a")
    assertTerm(superset(And(EqualTo("bin", 1), EqualTo("l", 2L))), "l", "2")
    refused(And(EqualTo("bin", 1), EqualTo("dec", 1.0)))
  }

  test("OR needs both sides and is exact only when both are") {
    val j = exact(Or(EqualTo("s", "a"), EqualTo("l", 1L)))
    assert(j.get("type").asText === "bool" && j.get("should").size === 2, j)
    superset(Or(EqualTo("s", "a"), EqualTo("t", "x")))
    refused(Or(EqualTo("s", "a"), EqualTo("dec", 1.0)))
  }

  test("NOT finds its child's FALSE rows: exactly where the column's existence is searchable") {
    // NOT (l = 5) is TRUE where l has a value other than 5; NULL (not TRUE) where l is null.
    val j = exact(Not(EqualTo("l", 5L)))
    assert(j.get("type").asText === "bool")
    assert(j.get("must").get(0).get("type").asText === "field_presence", j)
    assert(j.get("must").get(0).get("field").asText === "l", j)
    assertTerm(j.get("must_not").get(0), "l", "5")
    // Never-null children: every row the child does not match.
    val n = exact(Not(IsNull("l")))
    assert(n.get("must").get(0).get("type").asText === "match_all", n)
    Seq[Filter](
      EqualTo("s", "a"),
      IsNotNull("l"),
      In("i", Array[Any](1, 2)),
      LessThan("i", 1),
      EqualNullSafe("s", "a"),
      And(EqualTo("s", "a"), EqualTo("b", true)),
      Or(EqualTo("s", "a"), EqualTo("l", 1L)),
      Not(EqualTo("l", 5L))
    )
      .foreach(c => exact(Not(c)))
    // NOT NOT x is x.
    assertTerm(exact(Not(Not(EqualTo("l", 5L)))), "l", "5")
    // A child that is never FALSE (a NULL in the IN list) falls back to a superset: match-all
    // minus the child, which also holds the NULL rows that Spark then drops.
    val s1 = superset(Not(In("i", Array[Any](1, null))))
    assert(s1.get("must").get(0).get("type").asText === "match_all", s1)
    // The child must be exact: a superset child under must_not would drop matching rows.
    refused(Not(EqualTo("t", "x")))
    refused(Not(EqualTo("ts", Instant.EPOCH)))
    refused(Not(StringStartsWith("s", "a")))
    refused(Not(And(EqualTo("s", "a"), StringStartsWith("s", "b"))))
  }

  // ---- partition columns and unknown columns ----

  test("partition columns and unknown columns are not translated") {
    Seq[Filter](
      EqualTo("p", "a"),
      In("p", Array[Any]("a")),
      IsNull("p"),
      IsNotNull("p"),
      GreaterThan("p", "a"),
      StringStartsWith("p", "a"),
      EqualTo("nope", 1)).foreach(refused(_))
    val (q, pushed, post) = converter.translateConjuncts(Seq(EqualTo("p", "a"), LessThan("p", "z")))
    assert(q.isEmpty && pushed.isEmpty && post.toSet === Set(EqualTo("p", "a"), LessThan("p", "z")))
  }

  test("filters of unsupported shapes are not translated") {
    refused(AlwaysTrue())
    refused(StringStartsWith("l", "1"))
  }

  // ---- translateConjuncts ----

  test("translateConjuncts merges a lower and an upper bound on one field into one range") {
    val (q, pushed, post) =
      converter.translateConjuncts(Seq(GreaterThanOrEqual("l", 1L), LessThan("l", 10L)))
    val j = mapper.readTree(q.get.toQueryAstJson)
    assertRange(j, "l", ("Included", "1"), ("Excluded", "10"))
    assert(pushed.toSet === Set(GreaterThanOrEqual("l", 1L), LessThan("l", 10L)))
    assert(post.isEmpty)
  }

  test("translateConjuncts pairs a floating column's bounds into one range") {
    val fs = Seq(GreaterThan("d", 1.5), LessThanOrEqual("d", 9.5))
    val ordered = new FiltersToQueryConverter(indexSchema.copy(exactFloatRanges = Set("d")))
    val (q, pushed, post) = ordered.translateConjuncts(fs)
    assertRange(
      mapper.readTree(q.get.toQueryAstJson),
      "d",
      ("Excluded", "1.5"),
      ("Included", "9.5"))
    assert(pushed.toSet === fs.toSet && post.isEmpty)
    // Where a NaN with the sign bit may be, the same range narrows the search and Spark checks.
    val (q2, pushed2, post2) = converter.translateConjuncts(fs)
    assert(q2.map(_.toQueryAstJson) === q.map(_.toQueryAstJson))
    assert(pushed2.toSet === fs.toSet && post2.toSet === fs.toSet)
  }

  test("translateConjuncts gives up on a field with two lower bounds and keeps both for Spark") {
    val fs = Seq(GreaterThan("l", 1L), GreaterThan("l", 3L), LessThan("l", 9L))
    val (q, pushed, post) = converter.translateConjuncts(fs)
    assert(q.isEmpty && pushed.isEmpty && post.toSet === fs.toSet)
  }

  test("translateConjuncts keeps superset filters for Spark and drops exact ones") {
    val ts = GreaterThan("ts", Instant.parse("2024-01-01T00:00:00.5Z"))
    val text = EqualTo("t", "hello")
    val exactOne = EqualTo("s", "a")
    val refusedOne = EqualTo("dec", 1.0)
    val (q, pushed, post) = converter.translateConjuncts(Seq(ts, text, exactOne, refusedOne))
    assert(pushed.toSet === Set(ts, text, exactOne))
    assert(post.toSet === Set(ts, text, refusedOne))
    val j = mapper.readTree(q.get.toQueryAstJson)
    assert(j.get("type").asText === "bool" && j.get("must").size === 3, j)
  }

  test("translateConjuncts returns a lone query unwrapped, and no query for nothing") {
    val (q, _, _) = converter.translateConjuncts(Seq(EqualTo("s", "a")))
    assertTerm(mapper.readTree(q.get.toQueryAstJson), "s", "a")
    val (none, pushed, post) = converter.translateConjuncts(Nil)
    assert(none.isEmpty && pushed.isEmpty && post.isEmpty)
  }
}

package io.indextables.spark.filters

import java.time.{Instant, LocalDate}

import scala.util.Random

import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.sources._
import org.apache.spark.sql.types._
import org.apache.spark.unsafe.types.UTF8String
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.stats.SplitStatistics
import io.indextables.spark.transaction.AddAction

class SplitPrunerSuite extends AnyFunSuite {

  private val TruncateAt = 32

  private val schema = StructType(Seq(
    StructField("i", IntegerType),
    StructField("l", LongType),
    StructField("d", DoubleType),
    StructField("f", FloatType),
    StructField("dec", DecimalType(10, 2)),
    StructField("s", StringType),
    StructField("dt", DateType),
    StructField("ts", TimestampType),
    StructField("b", BooleanType),
    StructField("p", StringType),
    StructField("q", IntegerType),
    StructField("pd", DateType),
    StructField("t", ByteType),
    StructField("h", ShortType)
  ))
  private val partitions = Seq("p", "q", "pd")
  private val pruner = new SplitPruner(schema, partitions, "UTC", TruncateAt)

  private def add(
      parts: Map[String, String] = Map("p" -> "a", "q" -> "5", "pd" -> "2024-01-15"),
      min: Map[String, String] = Map.empty,
      max: Map[String, String] = Map.empty,
      withStats: Boolean = true): AddAction =
    AddAction(
      "part-0.split",
      parts,
      100L,
      0L,
      dataChange = true,
      minValues = if (withStats) Some(min) else None,
      maxValues = if (withStats) Some(max) else None)

  private def keeps(a: AddAction, fs: Filter*): Boolean = pruner.mayMatch(a, fs)

  // ---- partition pruning ----

  test("partition equality keeps the matching split and skips the others") {
    assert(keeps(add(), EqualTo("p", "a")))
    assert(!keeps(add(), EqualTo("p", "b")))
    assert(keeps(add(), EqualTo("q", 5)))
    assert(!keeps(add(), EqualTo("q", 6)))
    assert(keeps(add(), EqualTo("pd", java.sql.Date.valueOf("2024-01-15"))))
    assert(keeps(add(), EqualTo("pd", LocalDate.parse("2024-01-15"))))
    assert(!keeps(add(), EqualTo("pd", LocalDate.parse("2024-01-16"))))
  }

  test("partition ranges compare typed values, not strings") {
    val ten = add(parts = Map("p" -> "a", "q" -> "10", "pd" -> "2024-01-15"))
    assert(keeps(ten, GreaterThan("q", 9)))
    assert(!keeps(ten, GreaterThan("q", 10)))
    assert(keeps(ten, GreaterThanOrEqual("q", 10)))
    assert(!keeps(ten, LessThan("q", 2))) // "10" < "2" as strings, but not as ints
    assert(keeps(ten, LessThanOrEqual("q", 10)))
    assert(!keeps(ten, LessThan("q", 10)))
    assert(!keeps(ten, LessThan("pd", LocalDate.parse("2024-01-15"))))
    assert(keeps(ten, LessThan("pd", LocalDate.parse("2024-01-16"))))
  }

  test("partition IN keeps the split only when a listed value matches") {
    assert(keeps(add(), In("p", Array("x", "a"))))
    assert(!keeps(add(), In("p", Array("x", "y"))))
    assert(!keeps(add(), In("p", Array[Any](null, "x"))))
    assert(keeps(add(), In("q", Array[Any](4, 5))))
  }

  test("IS NULL and IS NOT NULL on partition values, null held as a JSON null or missing") {
    val nullP = add(parts = Map("p" -> null, "q" -> "5", "pd" -> "2024-01-15"))
    val missingP = add(parts = Map("q" -> "5", "pd" -> "2024-01-15"))
    Seq(nullP, missingP).foreach { a =>
      assert(keeps(a, IsNull("p")))
      assert(!keeps(a, IsNotNull("p")))
      assert(keeps(a, EqualNullSafe("p", null)))
    }
    assert(!keeps(add(), IsNull("p")))
    assert(keeps(add(), IsNotNull("p")))
    assert(!keeps(add(), EqualNullSafe("p", null)))
  }

  test("comparisons with a null partition value are never true, so the split is skipped") {
    val nullP = add(parts = Map("p" -> null, "q" -> null, "pd" -> null))
    assert(!keeps(nullP, EqualTo("p", "a")))
    assert(!keeps(nullP, GreaterThan("q", 0)))
    assert(!keeps(nullP, In("p", Array("a", "b"))))
    assert(!keeps(nullP, StringStartsWith("p", "a")))
    assert(!keeps(nullP, EqualNullSafe("p", "a")))
  }

  test("NOT of a partition filter inverts it") {
    assert(!keeps(add(), Not(EqualTo("p", "a"))))
    assert(keeps(add(), Not(EqualTo("p", "b"))))
    assert(keeps(add(), Not(In("q", Array[Any](1, 2)))))
    assert(!keeps(add(), Not(IsNotNull("p"))))
  }

  test("NOT of a partition filter that is TRUE on a null partition value skips the split") {
    val nullP = add(parts = Map("p" -> null, "q" -> "5", "pd" -> "2024-01-15"))
    assert(!keeps(nullP, Not(IsNull("p"))))
    assert(!keeps(nullP, Not(EqualNullSafe("p", null))))
    assert(!keeps(nullP, Not(Or(IsNull("p"), EqualTo("q", 1)))))
  }

  test("regression: NOT over a filter that is FALSE (not NULL) on a null partition keeps it") {
    // p IS NULL: `p <=> 'a'` and `p IS NOT NULL` are FALSE, so their negation is TRUE.
    val nullP = add(parts = Map("p" -> null, "q" -> "5", "pd" -> "2024-01-15"))
    assert(keeps(nullP, Not(EqualNullSafe("p", "a"))))
    assert(keeps(nullP, Not(IsNotNull("p"))))
    assert(keeps(nullP, Not(And(IsNotNull("p"), EqualTo("p", "a")))))
  }

  test("AND and OR combine partition filters") {
    assert(keeps(add(), And(EqualTo("p", "a"), EqualTo("q", 5))))
    assert(!keeps(add(), And(EqualTo("p", "a"), EqualTo("q", 6))))
    assert(keeps(add(), Or(EqualTo("p", "b"), EqualTo("q", 5))))
    assert(!keeps(add(), Or(EqualTo("p", "b"), EqualTo("q", 6))))
    assert(!keeps(add(), EqualTo("p", "a"), EqualTo("q", 6))) // top-level conjuncts
  }

  test("a filter mixing partition and data columns skips only on the partition side") {
    val a = add(min = Map("i" -> "0"), max = Map("i" -> "10"))
    assert(!keeps(a, And(EqualTo("p", "b"), EqualTo("i", 5))))
    assert(keeps(a, Or(EqualTo("p", "b"), EqualTo("i", 5))))
    assert(!keeps(a, Or(EqualTo("p", "b"), EqualTo("i", 50))))
    assert(keeps(a, Not(And(EqualTo("p", "a"), EqualTo("i", 50)))))
  }

  test("string prefix, suffix and substring filters on partition values") {
    val a = add(parts = Map("p" -> "alpha", "q" -> "1", "pd" -> null))
    assert(keeps(a, StringStartsWith("p", "al")) && !keeps(a, StringStartsWith("p", "ph")))
    assert(keeps(a, StringEndsWith("p", "ha")) && !keeps(a, StringEndsWith("p", "al")))
    assert(keeps(a, StringContains("p", "lph")) && !keeps(a, StringContains("p", "z")))
  }

  test("timestamp, boolean and double partition values are read as the writer casts them") {
    val typed = StructType(Seq(
      StructField("v", LongType),
      StructField("pt", TimestampType),
      StructField("pb", BooleanType),
      StructField("pf", DoubleType)))
    val utc = new SplitPruner(typed, Seq("pt", "pb", "pf"), "UTC", TruncateAt)
    val a = AddAction(
      "x.split",
      Map(
        "pt" -> "2024-01-01 10:00:00.5",
        "pb" -> "true",
        "pf" -> "1.0E10"),
      1L,
      0L,
      dataChange = true)
    assert(utc.mayMatch(a, Seq(EqualTo("pt", Instant.parse("2024-01-01T10:00:00.5Z")))))
    assert(!utc.mayMatch(a, Seq(EqualTo("pt", Instant.parse("2024-01-01T10:00:00Z")))))
    assert(!utc.mayMatch(
      a,
      Seq(GreaterThan(
        "pt",
        java.sql.Timestamp.from(Instant.parse("2024-01-01T10:00:01Z"))))))
    assert(utc.mayMatch(a, Seq(EqualTo("pb", true))) && !utc.mayMatch(a, Seq(EqualTo("pb", false))))
    assert(utc.mayMatch(a, Seq(EqualTo("pf", 1e10))) && !utc.mayMatch(a, Seq(LessThan("pf", 1e10))))
  }

  // ---- min/max data skipping ----

  private val ints = add(min = Map("i" -> "10", "l" -> "-5"), max = Map("i" -> "20", "l" -> "5"))

  test("equality skips a split whose min/max range excludes the value") {
    assert(keeps(ints, EqualTo("i", 10)) && keeps(ints, EqualTo("i", 20)))
    assert(keeps(ints, EqualTo("i", 15)))
    assert(!keeps(ints, EqualTo("i", 9)) && !keeps(ints, EqualTo("i", 21)))
    assert(!keeps(ints, EqualTo("l", -6L)) && keeps(ints, EqualTo("l", -5L)))
  }

  test("ranges skip a split that lies entirely on the other side of the bound") {
    assert(!keeps(ints, GreaterThan("i", 20)) && keeps(ints, GreaterThan("i", 19)))
    assert(!keeps(ints, GreaterThanOrEqual("i", 21)) && keeps(ints, GreaterThanOrEqual("i", 20)))
    assert(!keeps(ints, LessThan("i", 10)) && keeps(ints, LessThan("i", 11)))
    assert(!keeps(ints, LessThanOrEqual("i", 9)) && keeps(ints, LessThanOrEqual("i", 10)))
    assert(!keeps(ints, GreaterThan("i", 5), LessThan("i", 10)))
  }

  test("IN skips a split only when every value is outside min/max") {
    assert(!keeps(ints, In("i", Array[Any](1, 25, 30))))
    assert(keeps(ints, In("i", Array[Any](1, 15))))
    assert(keeps(ints, In("i", Array[Any](1, null))))
  }

  test("tinyint and smallint skip on their min/max as numbers") {
    val a = add(min = Map("t" -> "-128", "h" -> "-300"), max = Map("t" -> "-1", "h" -> "32767"))
    assert(keeps(a, EqualTo("t", -128.toByte)) && keeps(a, LessThan("t", 0.toByte)))
    assert(!keeps(a, EqualTo("t", 0.toByte)) && !keeps(a, GreaterThan("t", -1.toByte)))
    assert(!keeps(a, LessThan("h", -300.toShort)) && keeps(a, EqualTo("h", 32767.toShort)))
    assert(!keeps(a, In("t", Array[Any](1.toByte, 127.toByte))))
  }

  test("dates, timestamps and decimals skip on their typed min/max") {
    val a = add(
      min = Map("dt" -> "2024-01-01", "ts" -> "2024-01-01T00:00:00.5Z", "dec" -> "-1.50"),
      max = Map("dt" -> "2024-01-31", "ts" -> "2024-01-01T00:00:01Z", "dec" -> "99.99"))
    assert(keeps(a, EqualTo("dt", LocalDate.parse("2024-01-31"))))
    assert(!keeps(a, EqualTo("dt", java.sql.Date.valueOf("2024-02-01"))))
    assert(!keeps(a, LessThan("ts", Instant.parse("2024-01-01T00:00:00.5Z"))))
    assert(keeps(a, LessThanOrEqual("ts", Instant.parse("2024-01-01T00:00:00.5Z"))))
    val second = java.sql.Timestamp.from(Instant.parse("2024-01-01T00:00:01Z"))
    assert(!keeps(a, GreaterThan("ts", second)))
    assert(keeps(a, GreaterThan("ts", Instant.parse("2024-01-01T00:00:00.999999Z"))))
    assert(!keeps(a, GreaterThan("dec", new java.math.BigDecimal("99.99"))))
    assert(keeps(a, EqualTo("dec", new java.math.BigDecimal("-1.5"))))
  }

  test("strings skip on min and on an untruncated max") {
    val a = add(min = Map("s" -> "banana"), max = Map("s" -> "cherry"))
    assert(!keeps(a, EqualTo("s", "apple")) && !keeps(a, EqualTo("s", "date")))
    assert(keeps(a, EqualTo("s", "cherry")) && !keeps(a, GreaterThan("s", "cherry")))
  }

  test("a truncated string max is never used to skip") {
    val prefix = "x" * TruncateAt
    val a = add(min = Map("s" -> "a"), max = Map("s" -> prefix))
    // The real max may be prefix + "zzz": rows above the recorded max may exist.
    assert(keeps(a, EqualTo("s", prefix + "zzz")))
    assert(keeps(a, GreaterThan("s", prefix)))
    assert(keeps(a, In("s", Array[Any](prefix + "y"))))
    assert(!keeps(a, LessThan("s", "a")))
  }

  test("a floating max is never used to skip, since NaN is left out of the statistics") {
    val a = add(min = Map("d" -> "1.0", "f" -> "1.0"), max = Map("d" -> "2.0", "f" -> "2.0"))
    assert(keeps(a, GreaterThan("d", 2.0)) && keeps(a, EqualTo("d", 3.0)))
    assert(keeps(a, GreaterThan("f", 2.0f)) && keeps(a, EqualTo("f", 3.0f)))
    assert(!keeps(a, LessThan("d", 1.0)) && !keeps(a, LessThan("f", 1.0f)))
    assert(keeps(a, EqualTo("d", Double.NaN)) && keeps(a, LessThan("d", Double.NaN)))
  }

  test("regression: a float min written as Float.toString does not skip the split holding it") {
    // 0.7f is 0.699999988..., its shortest text "0.7" read back as a double is larger.
    val st = SplitStatistics.forSchema(Seq(0 -> StructField("f", FloatType)), TruncateAt)
    st.update(new GenericInternalRow(Array[Any](0.7f)))
    val a = add(min = st.minValues, max = st.maxValues)
    assert(keeps(a, EqualTo("f", 0.7f)))
    assert(keeps(a, LessThanOrEqual("f", 0.7f)))
    assert(keeps(a, In("f", Array[Any](0.7f))))
  }

  test("missing statistics keep the split") {
    val none = add(withStats = false)
    assert(keeps(none, EqualTo("i", 1), GreaterThan("s", "z"), LessThan("dt", LocalDate.MIN)))
    val partial = add(min = Map("i" -> "10"), max = Map.empty)
    assert(keeps(partial, EqualTo("i", 1)))
    val nullStat = add(min = Map("i" -> null), max = Map("i" -> "20"))
    assert(keeps(nullStat, EqualTo("i", 1)) && keeps(nullStat, EqualTo("i", 100)))
    val garbage = add(min = Map("i" -> "ten"), max = Map("i" -> "twenty"))
    assert(keeps(garbage, EqualTo("i", 100)))
  }

  test("filters the pruner cannot reason about keep the split") {
    assert(keeps(ints, Not(EqualTo("i", 15))))
    assert(keeps(ints, IsNull("i")) && keeps(ints, IsNotNull("i")))
    assert(keeps(ints, EqualTo("b", true)))
    assert(keeps(ints, EqualTo("unknown", 1)))
    assert(keeps(ints, AlwaysTrue()))
  }

  // ---- property: never prune a split with a matching row ----

  private val dataCols = Seq("i", "l", "d", "f", "dec", "s", "dt", "ts")
  private val longPrefix = "k" * 40
  private val domains: Map[String, IndexedSeq[Any]] = Map(
    "i" -> IndexedSeq(-2, -1, 0, 1, 2, 3, 100, Int.MinValue, Int.MaxValue),
    "l" -> IndexedSeq(-2L, 0L, 1L, 7L, Long.MinValue, Long.MaxValue),
    "d" -> IndexedSeq(
      -1.5,
      -0.0,
      0.0,
      0.1,
      0.7,
      1e300,
      Double.NaN,
      Double.PositiveInfinity,
      Double.NegativeInfinity,
      1.0 / 3),
    "f" -> IndexedSeq(-1.5f, -0.0f, 0.0f, 0.1f, 0.7f, 0.3f, 1.0f / 3, Float.NaN, 3.4e38f),
    "dec" -> IndexedSeq("-1.00", "0.00", "0.01", "2.50", "99999999.99")
      .map(new java.math.BigDecimal(_)),
    "s" -> IndexedSeq(
      "",
      "a",
      "ab",
      "b",
      "é",
      longPrefix,
      longPrefix + "a",
      longPrefix + "b",
      "k" * 32,
      "k" * 31 + "z"),
    "dt" -> IndexedSeq("1969-12-31", "1970-01-01", "2024-02-29", "2024-03-01").map(LocalDate.parse),
    "ts" -> IndexedSeq(
      "1969-12-31T23:59:59.999999Z",
      "1970-01-01T00:00:00Z",
      "2024-01-01T00:00:00.000001Z",
      "2024-01-01T00:00:01Z").map(Instant.parse)
  )
  private val partitionDomains: Map[String, IndexedSeq[Any]] = Map(
    "p" -> IndexedSeq("a", "b", "ab"),
    "q" -> IndexedSeq(1, 2, 10),
    "pd" -> IndexedSeq("2024-01-01", "2024-01-02").map(LocalDate.parse))

  private def toInternal(c: String, v: Any): Any = (c, v) match {
    case (_, null) => null
    case ("s", s: String) => UTF8String.fromString(s)
    case ("dec", d: java.math.BigDecimal) => Decimal(d, 10, 2)
    case ("dt", d: LocalDate) => d.toEpochDay.toInt
    case ("ts", t: Instant) => t.getEpochSecond * 1000000L + t.getNano / 1000
    case (_, other) => other
  }

  /** Spark's ordering of two values of one column (NaN largest, -0.0 = 0.0). */
  private def compare(a: Any, b: Any): Int = (a, b) match {
    case (x: Float, y: Float) => compare(x.toDouble, y.toDouble)
    case (x: Double, y: Double) =>
      if (x == y || (x.isNaN && y.isNaN)) 0 else java.lang.Double.compare(x, y)
    case (x: String, y: String) => UTF8String.fromString(x).compareTo(UTF8String.fromString(y))
    case (x: java.math.BigDecimal, y: java.math.BigDecimal) => x.compareTo(y)
    case (x: LocalDate, y: LocalDate) => x.compareTo(y)
    case (x: Instant, y: Instant) => x.compareTo(y)
    case (x: Int, y: Int) => Integer.compare(x, y)
    case (x: Long, y: Long) => java.lang.Long.compare(x, y)
  }

  /** SQL three-valued evaluation of a filter on one row; None is NULL. */
  private def sql(f: Filter, row: Map[String, Any]): Option[Boolean] = {
    def cmp(c: String, v: Any): Option[Int] =
      if (row(c) == null || v == null) None else Some(compare(row(c), v))
    f match {
      case EqualTo(c, v) => cmp(c, v).map(_ == 0)
      case EqualNullSafe(c, v) =>
        if (row(c) == null || v == null) Some(row(c) == null && v == null)
        else cmp(c, v).map(_ == 0)
      case GreaterThan(c, v) => cmp(c, v).map(_ > 0)
      case GreaterThanOrEqual(c, v) => cmp(c, v).map(_ >= 0)
      case LessThan(c, v) => cmp(c, v).map(_ < 0)
      case LessThanOrEqual(c, v) => cmp(c, v).map(_ <= 0)
      case In(c, vs) =>
        if (row(c) == null) None
        else if (vs.exists(v => cmp(c, v).contains(0))) Some(true)
        else if (vs.contains(null)) None
        else Some(false)
      case IsNull(c) => Some(row(c) == null)
      case IsNotNull(c) => Some(row(c) != null)
      case StringStartsWith(c, p) => Option(row(c)).map(_.asInstanceOf[String].startsWith(p))
      case And(l, r) => (sql(l, row), sql(r, row)) match {
          case (Some(false), _) | (_, Some(false)) => Some(false)
          case (Some(true), Some(true)) => Some(true)
          case _ => None
        }
      case Or(l, r) => (sql(l, row), sql(r, row)) match {
          case (Some(true), _) | (_, Some(true)) => Some(true)
          case (Some(false), Some(false)) => Some(false)
          case _ => None
        }
      case Not(c) => sql(c, row).map(!_)
      case other => fail(s"the generator made a filter the test cannot evaluate: $other")
    }
  }

  private def randomLeaf(rnd: Random): Filter = {
    val all = dataCols ++ partitions
    val c = all(rnd.nextInt(all.size))
    val dom = domains.getOrElse(c, partitionDomains(c))
    def v: Any = dom(rnd.nextInt(dom.size))
    rnd.nextInt(if (c == "s" || c == "p") 10 else 9) match {
      case 0 => EqualTo(c, v)
      case 1 => GreaterThan(c, v)
      case 2 => GreaterThanOrEqual(c, v)
      case 3 => LessThan(c, v)
      case 4 => LessThanOrEqual(c, v)
      case 5 => In(c, Array.fill(1 + rnd.nextInt(3))(if (rnd.nextInt(8) == 0) null else v))
      case 6 => if (rnd.nextBoolean()) IsNull(c) else IsNotNull(c)
      case 7 => EqualNullSafe(c, if (rnd.nextInt(4) == 0) null else v)
      case 8 => EqualTo(c, v)
      case 9 => StringStartsWith(c, v.asInstanceOf[String].take(1 + rnd.nextInt(35)))
    }
  }

  private def randomFilter(rnd: Random, depth: Int): Filter =
    if (depth == 0 || rnd.nextInt(3) == 0) randomLeaf(rnd)
    else rnd.nextInt(3) match {
      case 0 => And(randomFilter(rnd, depth - 1), randomFilter(rnd, depth - 1))
      case 1 => Or(randomFilter(rnd, depth - 1), randomFilter(rnd, depth - 1))
      case _ => Not(randomFilter(rnd, depth - 1))
    }

  private def renderPartition(c: String, v: Any): String = v match {
    case null => null
    case other => other.toString
  }

  test("property: a split is never skipped when one of its rows matches the filters") {
    val rnd = new Random(20240601L)
    var checked = 0
    var matching = 0
    var skipped = 0
    (1 to 4000).foreach { iter =>
      val partValues: Map[String, Any] = partitions.map { c =>
        val dom = partitionDomains(c)
        c -> (if (rnd.nextInt(5) == 0) null else dom(rnd.nextInt(dom.size)))
      }.toMap
      val rows = Seq.fill(1 + rnd.nextInt(4)) {
        dataCols.map { c =>
          c -> (if (rnd.nextInt(6) == 0) null else domains(c)(rnd.nextInt(domains(c).size)))
        }.toMap ++ partValues
      }
      val stats = SplitStatistics.forSchema(
        dataCols.zipWithIndex.map { case (c, i) => i -> schema(c) },
        TruncateAt)
      rows.foreach { r =>
        stats.update(new GenericInternalRow(dataCols.map(c => toInternal(c, r(c))).toArray))
      }
      val a = add(
        parts = partValues.map { case (c, v) => c -> renderPartition(c, v) },
        min = stats.minValues,
        max = stats.maxValues)
      val filters = Seq.fill(1 + rnd.nextInt(2))(randomFilter(rnd, 2))
      val someRowMatches = rows.exists(r => filters.forall(f => sql(f, r).contains(true)))
      val kept = pruner.mayMatch(a, filters)
      if (someRowMatches) {
        matching += 1
        assert(
          kept,
          s"iteration $iter: skipped a split with a matching row\nfilters: $filters\n" +
            s"rows: $rows\nmin: ${a.minValues}\nmax: ${a.maxValues}\n" +
            s"partitions: ${a.partitionValues}"
        )
      }
      if (!kept) skipped += 1
      checked += 1
    }
    // The generator must exercise both sides: splits with matches, and splits the pruner skips.
    assert(matching > 500 && skipped > 500, s"matching=$matching skipped=$skipped of $checked")
  }
}

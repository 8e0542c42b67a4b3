package io.indextables.spark.filters

import java.time.{Instant, LocalDate, ZoneOffset}

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.sources._
import org.apache.spark.sql.types._

import io.indextables.spark.schema.{IndexKind, IndexedField, IpAddresses, TableIndexSchema}
import io.indextables.tantivy4java.split._

/**
 * A native query for a Spark filter. `exact` means the query matches exactly the rows for which
 * the filter is TRUE; otherwise it matches a superset and Spark must still apply the filter.
 */
final case class TranslatedFilter(query: SplitQuery, exact: Boolean)

/**
 * Translates Spark's V1 filters into tantivy4java split queries, never changing the answer:
 * what cannot be matched exactly is either translated to a superset (and kept in Spark) or not
 * translated at all. Rules that matter:
 *  - `text` columns are tokenized: `=` and substring filters on them become token queries that
 *    match a superset (Spark re-checks them) with tantivy's `default` tokenizer, whose tokens
 *    are known here, and ranges stay in Spark; other tokenizers get no token queries;
 *  - what a split does not index (stored-only fields) is not searched, ranges and existence
 *    need fast fields, and a column the split does not hold at all is NULL in every row;
 *  - NOT and SQL nulls differ (NOT over a null is null, a must-not keeps it): a NOT finds the
 *    FALSE rows of its child, exactly where the child's column existence can be searched, else
 *    a superset (see [[QuerySides]]);
 *  - timestamps are indexed at second precision, so their filters are widened to whole seconds;
 *  - Spark orders every NaN above all numbers; tantivy orders a plain NaN so too, but one with
 *    the sign bit set below all numbers. A range on a floating column is exact on splits
 *    recorded as holding no such NaN in it (`TableIndexSchema.exactFloatRanges`, from the add
 *    action's `stats`: see `stats/SplitCounts`), and elsewhere a superset: with an upper bound
 *    as it is, without one together with the values below every number.
 * With `tokenQueries` off, text columns get no token queries at all: for splits whose text may
 * hold tokens the tokenizer dropped (see TokenLimit). Stateless and thread-safe.
 */
final class FiltersToQueryConverter(schema: TableIndexSchema, tokenQueries: Boolean = true) {

  /**
   * The native query of `filter`: a superset of the rows where it is TRUE, exact when marked so;
   * None when nothing can be pushed. NOT takes the FALSE side of its child (see [[sides]]).
   */
  def translate(filter: Filter): Option[TranslatedFilter] = sides(filter).whenTrue

  /** Both sides of `filter`, its AND/OR/NOT walked by the one [[FilterLogic]]. */
  def sides(filter: Filter): QuerySides = FilterLogic.fold(filter)(leafSides)

  /**
   * A leaf's sides. Its FALSE rows: for a never-null filter, every row it does not match; for
   * a null-rejecting one with non-null literals, the rows whose column has a value and that it
   * does not match (exact only where the column's existence can be searched); otherwise, from
   * an exact TRUE side, every other row, which is a superset (it holds the NULL rows too).
   */
  private def leafSides(f: Filter): QuerySides = {
    val refs = f.references.toSeq
    if (refs.size == 1 && schema.isAbsent(refs.head)) return absentSides(f)
    lazy val t = leaf(f)
    new QuerySides(
      t,
      t.filter(_.exact).map { exact =>
        val column = f.references.headOption.flatMap(field)
        if (FilterLogic.neverNull(f)) TranslatedFilter(QuerySides.allBut(exact.query), exact = true)
        else if (FilterLogic.falseWhereNotTrue(f) && column.exists(hasExistence)) {
          TranslatedFilter(
            new SplitBooleanQuery().addMust(new SplitExistsQuery(column.get.name))
              .addMustNot(exact.query),
            exact = true)
        } else TranslatedFilter(QuerySides.allBut(exact.query), exact = false)
      }
    )
  }

  /**
   * A leaf on a column these splits do not hold (added to the table after they were written):
   * the column is NULL in every row, so the leaf is the same in every row and both sides are
   * exact: everything or nothing.
   */
  private def absentSides(f: Filter): QuerySides = {
    val value: Option[Option[Boolean]] = f match {
      case IsNull(_) => Some(Some(true))
      case IsNotNull(_) => Some(Some(false))
      case EqualNullSafe(_, v) => Some(Some(v == null))
      case other if FilterLogic.nullRejecting(other) => Some(None)
      case _ => None
    }
    def rows(matches: Boolean) =
      TranslatedFilter(if (matches) new SplitMatchAllQuery() else QuerySides.none, exact = true)
    value match {
      case Some(v) =>
        new QuerySides(Some(rows(v.contains(true))), Some(rows(v.contains(false))))
      case None => new QuerySides(None, None)
    }
  }

  private def leaf(filter: Filter): Option[TranslatedFilter] = filter match {

    case EqualTo(a, v) if nested(a).isDefined => nestedEquals(a, v)
    case In(a, values) if nested(a).isDefined =>
      val parts = values.toSeq.filter(_ != null).map(v => nestedEquals(a, v))
      if (parts.isEmpty || parts.exists(_.isEmpty)) None
      else Some(TranslatedFilter(
        parts.flatten.foldLeft(new SplitBooleanQuery())((b, p) => b.addShould(p.query)),
        exact = true))

    case EqualTo(a, v: String) if field(a).exists(_.kind == IndexKind.Text) =>
      if (tokenQueries && field(a).exists(_.defaultTokenized)) textEquals(a, v) else None
    case EqualTo(a, v) => field(a).flatMap(f => equalTo(f, v))
    case EqualNullSafe(a, v) if v != null => field(a).flatMap(f => equalTo(f, v))
    case In(a, values) if field(a).exists(termSetKind) && values.count(_ != null) > 1 =>
      field(a).flatMap(f => termSet(f, values.toSeq.filter(_ != null)))
    case In(a, values) =>
      field(a).flatMap { f =>
        val parts = values.toSeq.filter(_ != null).map(v => equalTo(f, v))
        if (parts.isEmpty || parts.exists(_.isEmpty)) None
        else {
          val b = new SplitBooleanQuery()
          parts.flatten.foreach(p => b.addShould(p.query))
          Some(TranslatedFilter(b, parts.flatten.forall(_.exact)))
        }
      }
    case GreaterThan(a, v) => range(a, Some((v, false)), None)
    case GreaterThanOrEqual(a, v) => range(a, Some((v, true)), None)
    case LessThan(a, v) => range(a, None, Some((v, false)))
    case LessThanOrEqual(a, v) => range(a, None, Some((v, true)))
    case IsNotNull(a) => field(a).filter(hasExistence).map(f =>
        TranslatedFilter(new SplitExistsQuery(f.name), exact = true))
    case IsNull(a) =>
      field(a).filter(hasExistence).map { f =>
        TranslatedFilter(QuerySides.allBut(new SplitExistsQuery(f.name)), exact = true)
      }
    case StringStartsWith(a, prefix) => wildcard(a, prefix, s => s"$s*")
    case StringEndsWith(a, suffix) => wildcard(a, suffix, s => s"*$s")
    case StringContains(a, sub)
        if field(a).exists(_.kind == IndexKind.Text) && !sub.forall(isAsciiAlnum) =>
      if (tokenQueries && field(a).exists(_.defaultTokenized)) textContains(a, sub) else None
    case StringContains(a, sub) => wildcard(a, sub, s => s"*$s*")
    case _ => None
  }

  /**
   * Translates the top-level conjuncts Spark pushes, combining lower and upper bounds on one
   * field into one range. Returns the query of all translated conjuncts, the conjuncts that were
   * pushed, and those Spark must still evaluate.
   */
  def translateConjuncts(filters: Seq[Filter]): (Option[SplitQuery], Seq[Filter], Seq[Filter]) = {
    // Spark adds IsNotNull(c) beside every null-rejecting filter on c. That sibling excludes
    // nulls on its own (in the query, or in Spark when it stays there), so the IsNotNull needs
    // no query clause of its own.
    val (implied, rest) = filters.partition {
      case IsNotNull(c) =>
        filters.exists(f => FilterLogic.nullRejecting(f) && f.references.toSeq == Seq(c))
      case _ => false
    }
    val (query, pushed, post) = translateAll(rest)
    (query, implied ++ pushed, post)
  }

  private def translateAll(filters: Seq[Filter]): (Option[SplitQuery], Seq[Filter], Seq[Filter]) = {
    val (ranges, others) = filters.partition(isRangeOnField)
    val byField = ranges.groupBy(rangeField)
    val rangeResults: Seq[(Seq[Filter], Option[TranslatedFilter])] =
      byField.toSeq.map { case (a, fs) =>
        val lower = fs.collect {
          case GreaterThan(_, v) => (v, false)
          case GreaterThanOrEqual(_, v) => (v, true)
        }
        val upper = fs.collect {
          case LessThan(_, v) => (v, false)
          case LessThanOrEqual(_, v) => (v, true)
        }
        if (lower.size <= 1 && upper.size <= 1) (fs, range(a, lower.headOption, upper.headOption))
        else (fs, None)
      }
    val otherResults = others.map(f => (Seq(f), translate(f)))
    val all = rangeResults ++ otherResults
    val pushed = all.collect { case (fs, Some(_)) => fs }.flatten
    val post = all.collect { case (fs, None) => fs; case (fs, Some(t)) if !t.exact => fs }.flatten
    val queries = all.flatMap(_._2.map(_.query))
    val query = queries match {
      case Seq() => None
      case Seq(q) => Some(q)
      case qs => Some(qs.foldLeft(new SplitBooleanQuery())((b, q) => b.addMust(q)))
    }
    (query, pushed, post)
  }

  private def isRangeOnField(f: Filter): Boolean = f match {
    case GreaterThan(_, _) | GreaterThanOrEqual(_, _) | LessThan(_, _) | LessThanOrEqual(_, _) =>
      true
    case _ => false
  }

  private def rangeField(f: Filter): String = f.references.head

  /**
   * The Spark type of a field inside a struct column held as a JSON object (`st.a.b`), when the
   * path crosses structs only (no array, no map) and the column is indexed.
   */
  private def nested(attr: String): Option[DataType] = {
    if (!attr.contains('.') || attr.contains('`')) return None
    val parts = attr.split('.').toSeq
    schema.field(parts.head).filter(f => f.indexed && f.kind == IndexKind.Json).flatMap { f =>
      parts.tail.foldLeft(Option(f.dataType)) {
        case (Some(st: StructType), name) => st.fields.find(_.name == name).map(_.dataType)
        case _ => None
      }
    }
  }

  /**
   * `=` on a struct's field: the JSON object's raw-tokenized string, or its integer, as one term
   * under the field's path: exactly the rows holding that value there (a missing or null field,
   * or a null struct, holds none, as Spark's comparison is then not TRUE).
   */
  private def nestedEquals(attr: String, v: Any): Option[TranslatedFilter] =
    (nested(attr), v) match {
      // A JSON object whose strings are tokenized holds no whole-value term.
      case (Some(StringType), s: String) if rawStrings(attr) =>
        Some(TranslatedFilter(new SplitTermQuery(attr, s), exact = true))
      case (Some(IntegerType | LongType), n @ (_: Int | _: Long)) =>
        Some(TranslatedFilter(new SplitTermQuery(attr, n.toString), exact = true))
      case (Some(BooleanType), b: Boolean) =>
        Some(TranslatedFilter(new SplitTermQuery(attr, b.toString), exact = true))
      case _ => None
    }

  private def rawStrings(attr: String): Boolean =
    schema.field(attr.takeWhile(_ != '.')).exists(_.tokenizer.contains("raw"))

  /** The column's field, if these splits index it (a stored-only field cannot be searched). */
  private def field(attr: String): Option[IndexedField] = schema.field(attr).filter(_.indexed)

  /** Fields whose absence can be searched: fast fields other than text, JSON and bytes. */
  def hasExistence(f: IndexedField): Boolean = f.fast && (f.kind match {
    case IndexKind.Text | IndexKind.Json | IndexKind.Bytes => false
    case _ => true
  })

  /** Fields whose IN list is one term set: raw strings and integers, terms as written. */
  private def termSetKind(f: IndexedField): Boolean =
    f.indexed && (f.kind == IndexKind.RawString || f.kind == IndexKind.I64)

  /**
   * `f IN values` as one term-set query (quickwit's `term_set`), which looks the terms up in
   * one pass: a boolean of one term query per value costs tantivy far more per value, which a
   * runtime filter of thousands of join keys makes plain. None for a value of another type.
   */
  private def termSet(f: IndexedField, values: Seq[Any]): Option[TranslatedFilter] = {
    val terms = values.map {
      case s: String if f.kind == IndexKind.RawString => Some(s)
      case n @ (_: Int | _: Long | _: Short | _: Byte) if f.kind == IndexKind.I64 =>
        Some(n.toString)
      case _ => None
    }
    if (terms.exists(_.isEmpty)) None
    else {
      val json = FiltersToQueryConverter.mapper.createObjectNode()
      json.put("type", "term_set")
      val list = json.putObject("terms_per_field").putArray(f.name)
      terms.flatten.distinct.foreach(t => list.add(t))
      Some(TranslatedFilter(new SplitParsedQuery(json.toString), exact = true))
    }
  }

  private def equalTo(f: IndexedField, v: Any): Option[TranslatedFilter] =
    (f.kind, f.dataType, v) match {
      case (IndexKind.RawString, _, s: String) =>
        Some(TranslatedFilter(new SplitTermQuery(f.name, s), exact = true))
      // An address is matched exactly when written as it is stored (see IpAddresses); another
      // spelling of it is a different string to Spark, so stays with Spark.
      case (IndexKind.Ip, _, s: String) if IpAddresses.canonical(s).contains(s) =>
        Some(TranslatedFilter(new SplitTermQuery(f.name, s), exact = true))
      case (IndexKind.I64, _, n @ (_: Int | _: Long | _: Short | _: Byte)) =>
        Some(TranslatedFilter(new SplitTermQuery(f.name, n.toString), exact = true))
      case (IndexKind.F64, DoubleType | FloatType, n) if f.fast =>
        floating(n).filter(d => !d.isNaN && !d.isInfinite && d != 0.0).map { d =>
          TranslatedFilter(
            SplitRangeQuery.inclusiveRange(f.name, d.toString, d.toString, "f64"),
            exact = true)
        }
      case (IndexKind.Bool, _, b: Boolean) =>
        Some(TranslatedFilter(new SplitTermQuery(f.name, b.toString), exact = true))
      case (IndexKind.DateTime, DateType, d) if f.fast =>
        dateValue(d).map { day =>
          val s = dateTimeString(day)
          TranslatedFilter(SplitRangeQuery.inclusiveRange(f.name, s, s, "date"), exact = true)
        }
      case (IndexKind.DateTime, TimestampType, t) if f.fast =>
        timestampMicros(t).map { micros =>
          // The whole second holding the value: the Arrow FFI path indexes seconds, the
          // batch-document path keeps sub-second precision; [s, s+1) covers both.
          val lo = Math.floorDiv(micros, 1000000L)
          TranslatedFilter(
            new SplitRangeQuery(
              f.name,
              SplitRangeQuery.RangeBound.inclusive(instant(lo)),
              SplitRangeQuery.RangeBound.exclusive(instant(lo + 1)),
              "date"),
            exact = false)
        }
      case _ => None
    }

  private def range(
      attr: String,
      lower: Option[(Any, Boolean)],
      upper: Option[(Any, Boolean)]): Option[TranslatedFilter] =
    // Range queries run on fast fields only.
    field(attr).filter(_.fast).flatMap { f =>
      def bound(
          b: Option[(Any, Boolean)],
          render: Any => Option[String]): Option[SplitRangeQuery.RangeBound] =
        b match {
          case None => Some(SplitRangeQuery.RangeBound.unbounded())
          case Some((v, inclusive)) => render(v).map { s =>
              if (inclusive) SplitRangeQuery.RangeBound.inclusive(s)
              else SplitRangeQuery.RangeBound.exclusive(s)
            }
        }
      (f.kind, f.dataType) match {
        case (IndexKind.RawString, _) =>
          val r = (v: Any) => v match { case s: String => Some(s); case _ => None }
          for (lo <- bound(lower, r); hi <- bound(upper, r))
            yield TranslatedFilter(new SplitRangeQuery(f.name, lo, hi, "str"), exact = true)
        case (IndexKind.I64, _) =>
          val r = (v: Any) =>
            v match {
              case n @ (_: Int | _: Long | _: Short | _: Byte) => Some(n.toString); case _ => None
            }
          for (lo <- bound(lower, r); hi <- bound(upper, r))
            yield TranslatedFilter(new SplitRangeQuery(f.name, lo, hi, "i64"), exact = true)
        case (IndexKind.F64, DoubleType | FloatType) =>
          // Zero is refused: tantivy orders -0.0 below 0.0, Spark holds them equal. So are the
          // infinities, which a query cannot name.
          val r = (v: Any) =>
            floating(v).filter(d => !d.isNaN && !d.isInfinite && d != 0.0).map(_.toString)
          for (lo <- bound(lower, r); hi <- bound(upper, r)) yield {
            val q = new SplitRangeQuery(f.name, lo, hi, "f64")
            if (schema.exactFloatRanges.contains(f.name)) TranslatedFilter(q, exact = true)
            else if (upper.isDefined) TranslatedFilter(q, exact = false)
            else {
              // A NaN with the sign bit set, which Spark orders above every number, sits below
              // -Double.MaxValue in the index, with -Infinity.
              val below = new SplitRangeQuery(
                f.name,
                SplitRangeQuery.RangeBound.unbounded(),
                SplitRangeQuery.RangeBound.exclusive((-Double.MaxValue).toString),
                "f64")
              TranslatedFilter(new SplitBooleanQuery().addShould(q).addShould(below), exact = false)
            }
          }
        case (IndexKind.DateTime, DateType) =>
          val r = (v: Any) => dateValue(v).map(dateTimeString)
          for (lo <- bound(lower, r); hi <- bound(upper, r))
            yield TranslatedFilter(new SplitRangeQuery(f.name, lo, hi, "date"), exact = true)
        case (IndexKind.DateTime, TimestampType) if wholeSecondBounds(lower, upper) =>
          // `>=` and `<` a whole second after the epoch: exact whether the index holds the
          // value or the value truncated to the second (towards zero, so also for any value
          // before 1970, which falls on or below zero). What time-bucket queries filter with.
          val b = (v: Any) => instant(timestampMicros(v).get / 1000000L)
          val l = lower.map(x => SplitRangeQuery.RangeBound.inclusive(b(x._1)))
            .getOrElse(SplitRangeQuery.RangeBound.unbounded())
          val h = upper.map(x => SplitRangeQuery.RangeBound.exclusive(b(x._1)))
            .getOrElse(SplitRangeQuery.RangeBound.unbounded())
          Some(TranslatedFilter(new SplitRangeQuery(f.name, l, h, "date"), exact = true))
        case (IndexKind.DateTime, TimestampType) =>
          // Widen to whole seconds, inclusive: a superset that Spark narrows again.
          val lo = lower.map { case (v, _) =>
            timestampMicros(v).map(m => instant(Math.floorDiv(m, 1000000L)))
          }
          val hi = upper.map { case (v, _) =>
            timestampMicros(v).map(m => instant(Math.floorDiv(m + 999999L, 1000000L)))
          }
          if (lo.exists(_.isEmpty) || hi.exists(_.isEmpty)) None
          else {
            val l = lo.flatten.map(SplitRangeQuery.RangeBound.inclusive).getOrElse(
              SplitRangeQuery.RangeBound.unbounded())
            val h = hi.flatten.map(SplitRangeQuery.RangeBound.inclusive).getOrElse(
              SplitRangeQuery.RangeBound.unbounded())
            Some(TranslatedFilter(new SplitRangeQuery(f.name, l, h, "date"), exact = false))
          }
        case _ => None
      }
    }

  /**
   * Substring filters. On a raw string the pattern runs on the whole value (a superset, as the
   * pattern language is not Spark's). On a tokenized text column it runs on the tokens: an ASCII
   * letters-and-digits substring always lies inside one token (the tokenizer splits at every
   * other character, and the batch-document path keeps tokens up to tantivy's maximum length),
   * and tokens are lower-cased, so the lower-cased pattern matches a superset of the rows.
   */
  private def wildcard(
      attr: String,
      value: String,
      pattern: String => String): Option[TranslatedFilter] =
    field(attr).flatMap { f =>
      f.kind match {
        case IndexKind.RawString
            if value.nonEmpty && !value.exists(c => c == '*' || c == '?' || c == '\\') =>
          Some(TranslatedFilter(new SplitWildcardQuery(f.name, pattern(value)), exact = false))
        case IndexKind.Text
            if tokenQueries && f.defaultTokenized && value.nonEmpty && value.forall(isAsciiAlnum) =>
          Some(TranslatedFilter(
            new SplitWildcardQuery(f.name, pattern(value.toLowerCase(java.util.Locale.ROOT))),
            exact = false))
        case _ => None
      }
    }

  /** `=` on a text column: the phrase of the value's tokens, a superset Spark narrows. */
  private def textEquals(attr: String, value: String): Option[TranslatedFilter] = {
    val tokens =
      value.split("[^A-Za-z0-9]+").filter(_.nonEmpty).map(_.toLowerCase(java.util.Locale.ROOT))
    if (!value.forall(_ < 128) || tokens.isEmpty) None
    else if (tokens.length == 1)
      Some(TranslatedFilter(new SplitTermQuery(attr, tokens.head), exact = false))
    else Some(TranslatedFilter(new SplitPhraseQuery(attr, tokens.toList.asJava), exact = false))
  }

  /**
   * A substring of several words on a text column, as a superset: the needle's letters-and-digits
   * runs, in order, are consecutive tokens of any matching value (every other ASCII character
   * ends a token and makes none). A run with a separator on both sides within the needle is a
   * whole token, so the runs between the first and the last form a phrase; the first run ends a
   * token (`*run`) and the last one starts one (`run*`). Lower-cased like the index. When the
   * inner runs make a phrase, it alone is the superset: the edge wildcards would each walk the
   * whole term dictionary to narrow a selective phrase a little (Spark re-checks every row).
   * A single inner word keeps them, since one word alone may be as common as any.
   */
  private def textContains(attr: String, value: String): Option[TranslatedFilter] = {
    if (value.isEmpty || !value.forall(_ < 128)) return None
    val runs = "[A-Za-z0-9]+".r.findAllMatchIn(value).toList
    if (runs.isEmpty) return None
    val lower = (s: String) => s.toLowerCase(java.util.Locale.ROOT)
    val whole = runs.filter(m => m.start > 0 && m.end < value.length).map(m => lower(m.matched))
    val edges = if (whole.size >= 2) Nil
    else Seq(
      runs.headOption.filter(_.start == 0).map(m =>
        new SplitWildcardQuery(attr, s"*${lower(m.matched)}")),
      runs.lastOption.filter(_.end == value.length).map(m =>
        new SplitWildcardQuery(attr, s"${lower(m.matched)}*"))
    ).flatten
    val clauses =
      (whole match {
        case Nil => None
        case Seq(t) => Some(new SplitTermQuery(attr, t))
        case ts => Some(new SplitPhraseQuery(attr, ts.asJava))
      }).toSeq ++ edges
    val query: SplitQuery = clauses match {
      case Seq(q) => q
      case qs => qs.foldLeft(new SplitBooleanQuery())((b, q) => b.addMust(q))
    }
    Some(TranslatedFilter(query, exact = false))
  }

  private def isAsciiAlnum(c: Char): Boolean =
    (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')

  private def floating(v: Any): Option[Double] = v match {
    case d: Double => Some(d)
    case f: Float => Some(f.toDouble)
    case _ => None
  }

  private def dateValue(v: Any): Option[Long] = v match {
    case d: java.sql.Date => Some(d.toLocalDate.toEpochDay)
    case d: LocalDate => Some(d.toEpochDay)
    case _ => None
  }

  private def timestampMicros(v: Any): Option[Long] = v match {
    case t: java.sql.Timestamp =>
      Some(Math.addExact(
        Math.multiplyExact(Math.floorDiv(t.getTime, 1000L), 1000000L),
        (t.getNanos / 1000).toLong))
    case i: Instant =>
      Some(Math.addExact(Math.multiplyExact(i.getEpochSecond, 1000000L), (i.getNano / 1000).toLong))
    case _ => None
  }

  private def dateTimeString(epochDay: Long): String =
    LocalDate.ofEpochDay(epochDay).atStartOfDay().toInstant(ZoneOffset.UTC).toString

  /** An inclusive lower and an exclusive upper bound, each a whole second after the epoch. */
  private def wholeSecondBounds(
      lower: Option[(Any, Boolean)],
      upper: Option[(Any, Boolean)]): Boolean = {
    def whole(v: Any) = timestampMicros(v).exists(m => m > 0 && m % 1000000L == 0)
    (lower.nonEmpty || upper.nonEmpty) &&
    lower.forall { case (v, inclusive) => inclusive && whole(v) } &&
    upper.forall { case (v, inclusive) => !inclusive && whole(v) }
  }

  private def instant(epochSecond: Long): String = Instant.ofEpochSecond(epochSecond).toString
}

private object FiltersToQueryConverter {
  private[filters] val mapper = new com.fasterxml.jackson.databind.ObjectMapper()
}

package io.indextables.spark.config

import java.util.Locale

import scala.util.Try

/**
 * One `spark.indextables.*` key: its name, type, default, validation and a one-line doc. Values
 * are read by [[IndexTablesOptions]], the one resolver. Immutable.
 *
 * @param expected what a valid value looks like, for error messages ("a positive integer")
 * @param aliases  other names of the key (upstream's), read where the key itself is not set
 * @param parse    the value of a raw string, or None when it is not valid
 */
final case class ConfEntry[T](
    key: String,
    default: T,
    doc: String,
    expected: String,
    aliases: Seq[String] = Nil)(val parse: String => Option[T]) {

  /** The same entry, also read under `names`. */
  def withAliases(names: String*): ConfEntry[T] =
    ConfEntry(key, default, doc, expected, aliases ++ names)(parse)
}

/** Builders of [[ConfEntry]] for each kind of value, with their validation. */
object ConfEntry {

  def int(key: String, default: Int, doc: String, min: Int = Int.MinValue): ConfEntry[Int] =
    ConfEntry(key, default, doc, expectedNumber("integer", min.toLong))(s =>
      Try(s.trim.toInt).toOption.filter(_ >= min))

  def long(
      key: String,
      default: Long,
      doc: String,
      min: Long = Long.MinValue,
      max: Long = Long.MaxValue): ConfEntry[Long] = {
    val expected =
      if (max == Long.MaxValue) expectedNumber("integer", min)
      else s"an integer from $min to $max"
    ConfEntry(key, default, doc, expected)(s =>
      Try(s.trim.toLong).toOption.filter(v => v >= min && v <= max))
  }

  /**
   * A size in bytes: a whole number, or one with a binary unit suffix as upstream documents it
   * (`100M`, `1G`, `512k`; K, M, G, T, case ignored).
   */
  def bytes(key: String, default: Long, doc: String, min: Long, max: Long): ConfEntry[Long] =
    ConfEntry(
      key,
      default,
      doc,
      if (max == Long.MaxValue) s"a size in bytes of at least $min, such as 100M or 1G"
      else s"a size in bytes from $min to $max, such as 100M or 1G"
    )(s =>
      parseBytes(s).filter(v => v >= min && v <= max))

  def parseBytes(s: String): Option[Long] = {
    val t = s.trim.toUpperCase(Locale.ROOT)
    val shift = t.lastOption match {
      case Some('K') => 10
      case Some('M') => 20
      case Some('G') => 30
      case Some('T') => 40
      case _ => 0
    }
    val digits = if (shift == 0) t else t.dropRight(1).trim
    Try(BigInt(digits)).toOption.filter(_ >= 0).map(_ << shift).filter(_.isValidLong)
      .map(_.toLong)
  }

  def double(key: String, default: Double, doc: String, min: Double): ConfEntry[Double] =
    ConfEntry(key, default, doc, s"a number of at least $min")(s =>
      Try(s.trim.toDouble).toOption.filter(d => !d.isNaN && d >= min))

  def boolean(key: String, default: Boolean, doc: String): ConfEntry[Boolean] =
    ConfEntry(key, default, doc, "true or false")(s =>
      s.trim.toLowerCase(Locale.ROOT) match {
        case "true" => Some(true)
        case "false" => Some(false)
        case _ => None
      })

  /** A string out of `allowed` (compared ignoring case; the value is lower-cased). */
  def oneOf(key: String, default: String, doc: String, allowed: Seq[String]): ConfEntry[String] =
    ConfEntry(key, default, doc, allowed.mkString(" or "))(s =>
      Some(s.trim.toLowerCase(Locale.ROOT)).filter(allowed.contains))

  private def expectedNumber(kind: String, min: Long): String = min match {
    case 1L => s"a positive $kind"
    case 0L => s"a non-negative $kind"
    case m if m == Long.MinValue || m == Int.MinValue.toLong => s"an $kind"
    case m => s"an $kind of at least $m"
  }
}

package io.indextables.spark.config

import java.util.Locale

import scala.util.Try

/**
 * One `spark.indextables.*` key: its name, type, default, validation and a one-line doc. Values
 * are read by [[IndexTablesOptions]], the one resolver. Immutable.
 *
 * @param expected what a valid value looks like, for error messages ("a positive integer")
 * @param parse    the value of a raw string, or None when it is not valid
 */
final case class ConfEntry[T](key: String, default: T, doc: String, expected: String)(
    val parse: String => Option[T])

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

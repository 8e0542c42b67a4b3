package io.indextables.spark.schema

import java.net.{Inet6Address, InetAddress}

/**
 * The one spelling of each address that an `ip` column holds: IPv4 as a dotted quad without
 * leading zeros, IPv6 as RFC 5952 writes it (lower case, no leading zeros, the longest run of
 * two or more zero groups as `::`), which is how tantivy hands stored addresses back. Values
 * must be written in this form, so that they read back exactly as written and `=` means the same
 * to Spark (string equality) and to the index (address equality). Pure functions.
 */
object IpAddresses {
  private val V4 = """(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})""".r
  private val V6Chars = "^[0-9A-Fa-f:.]+$".r

  /** The canonical spelling of `s`, or None when it is no IPv4 or IPv6 address. */
  def canonical(s: String): Option[String] = s match {
    case V4(parts @ _*) =>
      val n = parts.map(_.toInt)
      if (n.forall(_ <= 255)) Some(n.mkString(".")) else None
    case _ if s.contains(':') && V6Chars.findFirstIn(s).isDefined =>
      // Only a literal reaches InetAddress (no name lookup: the text holds a colon).
      try InetAddress.getByName(s) match {
          case a: Inet6Address => Some(v6(a.getAddress))
          case v4 => Some("::ffff:" + v4.getHostAddress) // an IPv4-mapped address
        }
      catch { case _: java.net.UnknownHostException => None }
    case _ => None
  }

  /**
   * A CIDR block (`10.0.0.0/24`, `2001:db8::/32`) as its first and last addresses, canonical;
   * None when `s` is not one.
   */
  def cidrRange(s: String): Option[(String, String)] = s.split("/", -1) match {
    case Array(addr, bits) if bits.nonEmpty && bits.forall(_.isDigit) && bits.length <= 3 =>
      canonical(addr).flatMap { c =>
        val bytes = InetAddress.getByName(c).getAddress
        val width = bytes.length * 8
        val n = bits.toInt
        if (n > width) None
        else {
          val value = BigInt(1, bytes)
          val hostMask = (BigInt(1) << (width - n)) - 1
          val lo = value & ~hostMask
          val hi = lo | hostMask
          Some((format(lo, bytes.length), format(hi, bytes.length)))
        }
      }
    case _ => None
  }

  private def format(v: BigInt, size: Int): String = {
    val raw = v.toByteArray
    val bytes = new Array[Byte](size)
    val from = math.max(0, raw.length - size)
    System.arraycopy(raw, from, bytes, size - (raw.length - from), raw.length - from)
    if (size == 4) bytes.map(_ & 0xff).mkString(".") else v6(bytes)
  }

  private def v6(b: Array[Byte]): String = {
    val groups = (0 until 8).map(i => ((b(2 * i) & 0xff) << 8) | (b(2 * i + 1) & 0xff))
    // The longest run of zero groups (the first of equal runs), if two or more long.
    var best = (-1, 0)
    var i = 0
    while (i < 8) {
      if (groups(i) == 0) {
        var j = i
        while (j < 8 && groups(j) == 0) j += 1
        if (j - i > best._2) best = (i, j - i)
        i = j
      } else i += 1
    }
    val hex = groups.map(g => Integer.toHexString(g))
    if (best._2 < 2) hex.mkString(":")
    else hex.take(best._1).mkString(":") + "::" + hex.drop(best._1 + best._2).mkString(":")
  }
}

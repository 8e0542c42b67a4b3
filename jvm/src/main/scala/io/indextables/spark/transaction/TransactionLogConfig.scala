package io.indextables.spark.transaction

/**
 * The `spark.indextables.*` options that the transaction log reads, each defined once with its
 * default (names as in `protocol.md`). Values come from the options map given to
 * [[TransactionLog.forTable]]; the caller resolves precedence before that.
 */
object TransactionLogConfig {

  /** One option: its key, default and a one-line description. */
  final case class Entry[T](key: String, default: T, doc: String)

  val RetryMaxAttempts: Entry[Int] = Entry(
    "spark.indextables.transaction.retry.maxAttempts", 10,
    "Maximum attempts of a commit that conflicts with other writers")

  val RetryBaseDelayMs: Entry[Long] = Entry(
    "spark.indextables.transaction.retry.baseDelayMs", 100L,
    "Base delay of the exponential backoff between commit attempts")

  val RetryMaxDelayMs: Entry[Long] = Entry(
    "spark.indextables.transaction.retry.maxDelayMs", 5000L,
    "Maximum delay between commit attempts")

  val CompressionEnabled: Entry[Boolean] = Entry(
    "spark.indextables.transaction.compression.enabled", true,
    "Write version files gzip-compressed (with the 01 01 header)")

  def int(options: Map[String, String], e: Entry[Int]): Int =
    options.get(e.key).map { v =>
      scala.util.Try(v.trim.toInt).toOption.filter(_ > 0).getOrElse(
        throw TransactionLogErrors.invalidOption(e.key, v, "a positive integer"))
    }.getOrElse(e.default)

  def long(options: Map[String, String], e: Entry[Long]): Long =
    options.get(e.key).map { v =>
      scala.util.Try(v.trim.toLong).toOption.filter(_ >= 0).getOrElse(
        throw TransactionLogErrors.invalidOption(e.key, v, "a non-negative integer"))
    }.getOrElse(e.default)

  def boolean(options: Map[String, String], e: Entry[Boolean]): Boolean =
    options.get(e.key).map { v =>
      v.trim.toLowerCase(java.util.Locale.ROOT) match {
        case "true" => true
        case "false" => false
        case _ => throw TransactionLogErrors.invalidOption(e.key, v, "true or false")
      }
    }.getOrElse(e.default)
}

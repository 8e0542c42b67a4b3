package io.indextables.spark.config

import java.util.Locale

import io.indextables.spark.IndexTablesErrors

/**
 * Resolved configuration for one read or write. Immutable and serializable, so the driver can
 * hand it to executors. Keys compare case-insensitively, as Spark's options do.
 *
 * @param options     options given to this read or write (highest precedence)
 * @param sessionConf `spark.indextables.*` entries of the session configuration
 * @param tableProps  properties recorded in the table's metadata (lowest, above defaults)
 */
final case class IndexTablesOptions(
    options: Map[String, String],
    sessionConf: Map[String, String] = Map.empty,
    tableProps: Map[String, String] = Map.empty) {

  private def lower(m: Map[String, String]) = m.map { case (k, v) => k.toLowerCase(Locale.ROOT) -> v }
  private val layers = Seq(lower(options), lower(sessionConf), lower(tableProps))

  def raw(key: String): Option[String] = {
    val k = key.toLowerCase(Locale.ROOT)
    layers.collectFirst { case m if m.contains(k) => m(k) }
  }

  def get[T](entry: ConfEntry[T]): T = raw(entry.key) match {
    case None => entry.default
    case Some(v) =>
      try entry.parse(v)
      catch { case e: Exception => throw IndexTablesErrors.invalidOption(entry.key, v, e) }
  }

  /** Every typemap entry, column name (as written in the key) to its lower-cased index type. */
  def typemap: Map[String, String] = {
    val prefix = IndexTablesConf.TypemapPrefix.toLowerCase(Locale.ROOT)
    // Lowest precedence first, so higher layers overwrite.
    Seq(tableProps, sessionConf, options).foldLeft(Map.empty[String, String]) { (acc, layer) =>
      acc ++ layer.collect {
        case (k, v) if k.toLowerCase(Locale.ROOT).startsWith(prefix) =>
          k.substring(prefix.length).toLowerCase(Locale.ROOT) -> v.trim.toLowerCase(Locale.ROOT)
      }
    }
  }

  /** Every key of `options` that is a Hadoop/plugin setting, for the transaction log. */
  def asMap: Map[String, String] = tableProps ++ sessionConf ++ options
}

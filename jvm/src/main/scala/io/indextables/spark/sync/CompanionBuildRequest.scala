package io.indextables.spark.sync

import io.indextables.spark.write.CompanionWrite

/**
 * What one BUILD INDEXTABLES COMPANION asks, its clauses checked for form (names and values
 * that need no source to check). Column names are as written; they are matched with the
 * source's columns ignoring case. None: the clause was not given.
 *
 * @param indexingModes   column to index kind: text, string, json or ip
 * @param fastFieldMode   tantivy4java's FastFieldMode name, one of CompanionWrite.FastFieldModes
 * @param targetInputSize the most Parquet bytes one split indexes (one file may exceed it)
 * @param heapSize        the native writer's heap, bytes
 * @param where           a Spark SQL predicate on partition columns: only matching files are
 *                        indexed, and only matching splits may be removed
 * @param sourceFormat    `parquet`, `delta` or `iceberg` (lower case)
 * @param fromVersion     the Delta version (FROM VERSION) or Iceberg snapshot id (FROM SNAPSHOT)
 *                        to index: None, the latest
 * @param pollIntervalMs  WITH STREAMING POLL INTERVAL: sync again every this many ms until
 *                        stopped (None: once)
 */
final case class CompanionBuildRequest(
    includeColumns: Option[Seq[String]],
    excludeColumns: Option[Seq[String]],
    indexingModes: Option[Seq[(String, String)]],
    fastFieldMode: Option[String],
    targetInputSize: Long,
    heapSize: Long,
    where: Option[String],
    dryRun: Boolean,
    sourceFormat: String = "parquet",
    fromVersion: Option[Long] = None,
    pollIntervalMs: Option[Long] = None)

object CompanionBuildRequest {

  /** The index kinds INDEXING MODES takes, by the names it accepts (`ipaddress` as upstream). */
  val Modes: Map[String, String] =
    Map("text" -> "text", "string" -> "string", "json" -> "json", "ip" -> "ip", "ipaddress" -> "ip")

  /** The fast field mode of a build that names none: the one writes use. */
  val DefaultFastFieldMode: String = CompanionWrite.FastFieldMode

  /** Upstream's default TARGET INPUT SIZE. */
  val DefaultTargetInputSize: Long = 2L << 30
}

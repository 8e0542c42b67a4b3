package io.indextables.spark.lake

import io.indextables.spark.{IndexTablesErrors, SparkVersionCheck}

/**
 * The other table formats' libraries, which are the user's: never bundled, maybe absent. Their
 * names and checks live here, in an object that touches no class of theirs: code that only asks
 * which format a source is (a Parquet build, a read of any companion index) must not load a
 * class whose methods name Delta's or Iceberg's types, which fails without them.
 */
object Libraries {

  /** How the log records a companion index over a Delta table, and BUILD ... FOR DELTA names it. */
  val DeltaFormat = "delta"

  /** How the log records a companion index over an Iceberg table. */
  val IcebergFormat = "iceberg"

  /** Whether delta-spark is on the class path; without it, a Delta source is refused. */
  def deltaAvailable: Boolean = onClassPath("org.apache.spark.sql.delta.DeltaLog")

  /** Whether iceberg-spark-runtime is on the class path; without it, an Iceberg source is refused. */
  def icebergAvailable: Boolean = onClassPath("org.apache.iceberg.spark.SparkCatalog")

  /**
   * The Spark lines on which a companion index over a Delta or Iceberg table is served: Delta's
   * releases for Spark 4.1 and 4.2 changed the snapshot API the build calls
   * (`DeltaLog.getSnapshotAt`, `getChanges`), and Iceberg has no runtime for Spark 4.2.
   * Companions over Parquet directories are served on every line.
   */
  val LakeSparkLines: Seq[String] = Seq("3.5", "4.0")

  /**
   * Throws `INDEXTABLES_COMPANION_SOURCE_UNSUPPORTED_SPARK` on a Spark line where a companion
   * over a `format` table is not served; called before any class of that library is touched.
   */
  def checkSparkLine(format: String): Unit = {
    val running = org.apache.spark.SPARK_VERSION
    if (!SparkVersionCheck.serves(LakeSparkLines, running))
      throw IndexTablesErrors.companionSourceUnsupportedSpark(format, running, LakeSparkLines)
  }

  /** Whether `className` (a table format's library) is on the class path. */
  def onClassPath(className: String): Boolean =
    try {
      Class.forName(className, false, getClass.getClassLoader)
      true
    } catch { case _: ClassNotFoundException | _: LinkageError => false }
}

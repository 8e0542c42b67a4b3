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

  /** delta-spark's Maven coordinates for the running Spark line, as an error names them. */
  def deltaLibrary: String = SparkVersionCheck.lineOf(org.apache.spark.SPARK_VERSION) match {
    case "3.5" => "delta-spark (io.delta:delta-spark_2.12)"
    case "4.0" => "delta-spark (io.delta:delta-spark_2.13, 4.0.x)"
    case line => s"delta-spark (io.delta:delta-spark_${line}_2.13)"
  }

  /** Iceberg's Spark runtime's Maven coordinates for the running Spark line. */
  def icebergLibrary: String = {
    val line = SparkVersionCheck.lineOf(org.apache.spark.SPARK_VERSION)
    val scala = if (line == "3.5") "2.12" else "2.13"
    s"iceberg-spark-runtime (org.apache.iceberg:iceberg-spark-runtime-${line}_$scala)"
  }

  /**
   * The Spark lines on which a companion index over an Iceberg table is served: Iceberg has no
   * Spark runtime for Spark 4.2 (1.10 serves 3.5 and 4.0, 1.11 serves 4.1). Companions over Delta
   * tables (whose calls that differ between Delta's releases go through [[DeltaLogCalls]]) and
   * over Parquet directories are served on every line the JAR serves.
   */
  val IcebergSparkLines: Seq[String] = Seq("3.5", "4.0", "4.1")

  /**
   * Throws `INDEXTABLES_COMPANION_SOURCE_UNSUPPORTED_SPARK` on a Spark line where a companion
   * over an Iceberg table is not served; called before any class of Iceberg's is touched.
   */
  def checkIcebergSparkLine(): Unit = {
    val running = org.apache.spark.SPARK_VERSION
    if (!SparkVersionCheck.serves(IcebergSparkLines, running))
      throw IndexTablesErrors.companionSourceUnsupportedSpark("Iceberg", running, IcebergSparkLines)
  }

  /** Whether `className` (a table format's library) is on the class path. */
  def onClassPath(className: String): Boolean =
    try {
      Class.forName(className, false, getClass.getClassLoader)
      true
    } catch { case _: ClassNotFoundException | _: LinkageError => false }
}

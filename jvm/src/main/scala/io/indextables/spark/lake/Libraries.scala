package io.indextables.spark.lake

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

  /** Whether `className` (a table format's library) is on the class path. */
  def onClassPath(className: String): Boolean =
    try {
      Class.forName(className, false, getClass.getClassLoader)
      true
    } catch { case _: ClassNotFoundException | _: LinkageError => false }
}

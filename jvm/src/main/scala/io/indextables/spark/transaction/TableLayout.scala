package io.indextables.spark.transaction

/**
 * How a table stores its rows: in its splits (tantivy's document store), or in Parquet files
 * that its index-only splits index (the companion layout, protocol feature
 * [[TableFeatures.CompanionLayout]]). Chosen when a table is created, never changed.
 */
sealed abstract class TableLayout(val name: String) {

  /** The protocol features a table of this layout requires. */
  def features: Set[String]
}

object TableLayout {
  case object Splits extends TableLayout("splits") { val features: Set[String] = Set.empty }

  case object Companion extends TableLayout("companion") {
    val features: Set[String] = Set(TableFeatures.CompanionLayout)
  }

  /** The layout named by `spark.indextables.write.layout` (already validated). */
  def apply(name: String): TableLayout = if (name == Companion.name) Companion else Splits

  def of(protocol: ProtocolAction): TableLayout =
    if (TableFeatures.isCompanion(protocol)) Companion else Splits

  /**
   * What a companion table records in its metadata's configuration, under upstream's keys for
   * companion indexes: its splits index Parquet files, kept under the table itself.
   */
  def companionConfiguration(fastFieldMode: String): Map[String, String] = Map(
    "indextables.companion.enabled" -> "true",
    "indextables.companion.sourceFormat" -> "parquet",
    "indextables.companion.fastFieldMode" -> fastFieldMode
  )
}

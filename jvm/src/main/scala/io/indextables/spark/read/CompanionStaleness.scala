package io.indextables.spark.read

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.DeltaLog

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.IndexTablesConf
import io.indextables.spark.transaction.TableLayout

/**
 * The staleness bound of a read of a companion index over a Delta table
 * (`read.companion.maxSourceVersionLag`): the index answers as of the source version it was
 * last synced to, and a read that allows it to lag only so far fails past that, naming both
 * versions. The table's latest version comes from Delta's own log (delta-spark, the user's, on
 * the class path wherever Delta tables are read). Driver side; off by default.
 */
private[read] object CompanionStaleness {

  def check(table: ScanTable): Unit = {
    val allowed = table.opts.get(IndexTablesConf.CompanionMaxSourceVersionLag)
    val conf = table.snapshot.metadata.configuration
    if (allowed >= 0 && conf.get(TableLayout.SourceFormatKey).contains("delta")) {
      for {
        root <- conf.get(TableLayout.SourceTablePathKey)
        synced <- conf.get(TableLayout.SourceVersionKey).map(_.toLong)
      } {
        val latest =
          try DeltaLog.forTable(SparkSession.active, new Path(root)).update().version
          catch {
            case _: NoClassDefFoundError => throw IndexTablesErrors
                .companionSourceLibraryMissing("delta", "delta-spark (io.delta:delta-spark_2.12)")
          }
        if (latest - synced > allowed) throw IndexTablesErrors
          .companionIndexStale(table.tablePath, root, synced, latest, allowed)
      }
    }
  }
}

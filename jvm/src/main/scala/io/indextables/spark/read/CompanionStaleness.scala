package io.indextables.spark.read

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.delta.DeltaLog

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.IndexTablesConf
import io.indextables.spark.lake.{IcebergTables, Libraries}
import io.indextables.spark.transaction.TableLayout

/**
 * The staleness bound of a read of a companion index over a Delta or Iceberg table
 * (`read.companion.maxSourceVersionLag`): the index answers as of the source version it was
 * last synced to, and a read that allows it to lag only so far fails past that, naming both
 * versions. The table's latest version comes from its own library (delta-spark or Iceberg, the
 * user's, on the class path wherever such tables are read): a Delta table's versions apart, or
 * an Iceberg table's snapshots along its history since the one synced (one whose history no
 * longer holds it is as far behind as can be). Driver side; off by default.
 */
private[read] object CompanionStaleness {

  def check(table: ScanTable): Unit = {
    val allowed = table.opts.get(IndexTablesConf.CompanionMaxSourceVersionLag)
    val conf = table.snapshot.metadata.configuration
    if (allowed >= 0) {
      for {
        format <- conf.get(TableLayout.SourceFormatKey)
        root <- conf.get(TableLayout.SourceTablePathKey)
        synced <- conf.get(TableLayout.SourceVersionKey).map(_.toLong)
      } {
        val behind = format match {
          case Libraries.DeltaFormat =>
            val latest =
              try DeltaLog.forTable(SparkSession.active, new Path(root)).update().version
              catch {
                case _: NoClassDefFoundError =>
                  throw IndexTablesErrors.companionSourceLibraryMissing(
                    "delta",
                    Libraries.deltaLibrary)
              }
            Some(s"version $latest" -> (latest - synced))
          case Libraries.IcebergFormat =>
            Libraries.checkIcebergSparkLine()
            IcebergTables.recorded(conf).map { ref =>
              val spark = SparkSession.active
              val loaded =
                try IcebergTables.load(
                    spark,
                    ref,
                    spark.sessionState.newHadoopConfWithOptions(table.opts.hadoopOptions))
                catch {
                  case _: NoClassDefFoundError => throw IndexTablesErrors
                      .companionSourceLibraryMissing("iceberg", Libraries.icebergLibrary)
                }
              val current = Option(loaded.currentSnapshot()).map(_.snapshotId())
              val steps = IcebergTables.snapshotsSince(loaded, synced).getOrElse(Long.MaxValue)
              s"snapshot ${current.getOrElse("none")}" -> steps
            }
          case _ => None
        }
        behind.foreach { case (latest, lag) =>
          if (lag > allowed) throw IndexTablesErrors
            .companionIndexStale(
              table.tablePath,
              format,
              TableLayout.versionWord(format),
              root,
              synced,
              latest,
              lag,
              allowed)
        }
      }
    }
  }
}

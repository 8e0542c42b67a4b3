package io.indextables.spark.read

import org.apache.spark.sql.connector.read.Scan
import org.apache.spark.sql.connector.read.streaming.MicroBatchStream

import io.indextables.spark.IndexTablesErrors

/**
 * A plain read's scan that can also stream its table. Spark 4.2 negotiates a stream's scan as a
 * batch read's (it prunes the columns to the stream's, then builds), so [[ReadRoute]] may hand
 * a stream the scan of any plain read's route: the driver-answered one, or the companion's
 * Parquet scan. Whatever the route, a stream reads its new splits by search tasks
 * ([[IndexTables4SparkScan.microBatchStream]]).
 */
private[spark] trait StreamableScan extends Scan {

  /** What the read was planned from; None for a scan that no stream can come from. */
  protected def streamOf: Option[ScanInputs]

  override def toMicroBatchStream(checkpointLocation: String): MicroBatchStream =
    streamOf.map(IndexTables4SparkScan.microBatchStream).getOrElse(
      throw IndexTablesErrors.internalError(s"a stream planned from the scan ${description()}"))
}

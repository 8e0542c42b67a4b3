package io.indextables.spark.write

import scala.util.Try

import io.indextables.spark.transaction.{AddAction, Snapshot, TableLayout, TransactionLog}

/**
 * How big the tasks of an optimized write should be, from what the table already knows.
 *
 * @param mode             `history` (sized from the table's splits) or `sampling`
 * @param advisoryBytes    the shuffle partition size to ask AQE for
 * @param bytesPerRow      on-disk split bytes per row of the table, in history mode
 * @param maxRowsPerSplit  the rows after which a task rolls to a new split (97 % of
 *                         maxSplitSize over bytesPerRow), in history mode
 */
final case class SizeEstimate(
    mode: String,
    advisoryBytes: Long,
    bytesPerRow: Option[Double],
    maxRowsPerSplit: Option[Long])

/**
 * The advisory shuffle partition size of an optimized write, as the seed's WriteSizeEstimator
 * says:
 *  - history mode, once the table's live splits hold `minRows` rows: their real on-disk bytes
 *    per row say how many rows make a target-sized split, and the shuffle bytes per row an
 *    earlier optimized write of the table measured (its commit record's `shuffleBytesRead` over
 *    `numOutputRows`) say how many shuffle bytes those rows are; without such a measurement the
 *    advisory size is the sampling mode's;
 *  - sampling mode: `targetSplitSize * samplingRatio` when `samplingRatio` is set (the seed's
 *    formula), else the target size over the split bytes per shuffle byte measured for the
 *    layout ([[splitBytesPerShuffleByte]]);
 *  - any failure falls back to sampling mode.
 * Driver side, pure but for reading the log.
 */
object WriteSizeEstimator {

  /** Commit records looked at, newest first, for a measured shuffle size. */
  private val RecordsSearched = 20

  /**
   * The share of `maxSplitSize` a rolling task aims at. `maxSplitSize` is an upper bound, and
   * bytes per row measured over whole splits land a rolled split on it to within a few hundred
   * bytes either side (a smaller split carries its fixed overhead over fewer rows), so the row
   * limit leaves a little room.
   */
  private[write] val RollHeadroom = 0.97

  def estimate(
      existing: Option[Snapshot],
      log: => TransactionLog,
      targetSplitSize: Long,
      maxSplitSize: Long,
      samplingRatio: Option[Double],
      minRows: Long,
      layout: TableLayout,
      companionBytes: Option[AddAction => Long] = None): SizeEstimate = {
    val shufflePerSplitByte = samplingRatio.getOrElse(1.0 / splitBytesPerShuffleByte(layout))
    val sampling =
      SizeEstimate("sampling", clamp(targetSplitSize * shufflePerSplitByte), None, None)
    Try {
      existing.flatMap { snap =>
        val files = snap.allFiles.filter(_.numRecords.exists(_ > 0))
        val rows = files.flatMap(_.numRecords).sum
        if (rows < minRows) None
        else {
          val bytesPerRow = companionBytes match {
            case None => files.map(_.size).sum.toDouble / rows
            case Some(parquetBytes) =>
              // A companion split's rows are in its Parquet files too: the newest splits, with
              // theirs, give the bytes per row (each file's size is one storage call).
              val sample = files.sortBy(-_.modificationTime).take(CompanionSample)
              sample.map(a => a.size + parquetBytes(a)).sum.toDouble /
                sample.flatMap(_.numRecords).sum
          }
          val targetRows = targetSplitSize / bytesPerRow
          val advisory = shuffleBytesPerRow(log, snap.version)
            .map(perRow => clamp(targetRows * perRow))
            .getOrElse(sampling.advisoryBytes)
          Some(SizeEstimate(
            "history",
            advisory,
            Some(bytesPerRow),
            Some(math.max(1L, (maxSplitSize * RollHeadroom / bytesPerRow).toLong))))
        }
      }
    }.toOption.flatten.getOrElse(sampling)
  }

  /**
   * On-disk bytes a write makes of one byte of shuffle data, as measured, for a first write
   * (nothing of the table measured yet) whose `samplingRatio` is not set. Spark's shuffle blocks
   * are compressed, and a split holds the rows compressed again plus the index over them (on the
   * companion layout, its Parquet file plus an index-only split), so a split comes out larger than the shuffle bytes it was written from, not smaller
   * as the seed's default ratio of 1.1 assumes: with it, a first write of 600,000 log-like rows
   * at an 8M target made splits of 1.17-1.54 x the target on the splits layout (1.47 bytes per
   * shuffle byte) and 1.85-1.89 x on the companion layout (1.68, the Parquet file counted with
   * its split, as history mode counts it). AQE fills each coalesced partition to nearly the
   * advisory size, so a split is about the target times the data's own ratio over this one:
   * within 0.5-1.5 x the target for data whose ratio is 0.55-1.55 times the measured one.
   * Companion splits lost their string fast columns since (HYBRID): the same measure then gave
   * 1.18 on the test suite's rows and 0.94-0.98 on 800,000 benchmark log rows at 8M and 32M, so
   * the companion layout takes 1.4. Not nearer 1.0: a rebalance splits a shuffle partition
   * only when it is larger than the advisory size, and at 1.05 or 1.2 the test rows' two
   * partitions (1.3 x the target each) stayed whole.
   * `tests/benchmarks/first_write_sizes.py` measures it at other targets.
   */
  def splitBytesPerShuffleByte(layout: TableLayout): Double = layout match {
    case TableLayout.Splits => SplitsLayoutExpansion
    case TableLayout.Companion => CompanionLayoutExpansion
  }
  val SplitsLayoutExpansion = 1.5
  val CompanionLayoutExpansion = 1.4

  /** Shuffle bytes per row measured by the newest optimized write among the last records. */
  private def shuffleBytesPerRow(log: TransactionLog, latest: Long): Option[Double] =
    (latest to math.max(0L, latest - RecordsSearched + 1) by -1L).iterator
      .flatMap(v => log.commitInfo(v))
      .flatMap { info =>
        for {
          bytes <- info.metrics.get(ShuffleBytesRead).flatMap(s => Try(s.toLong).toOption)
          rows <- info.metrics.get(NumOutputRows).flatMap(s => Try(s.toLong).toOption)
          if bytes > 0 && rows > 0
        } yield bytes.toDouble / rows
      }
      .take(1)
      .toList
      .headOption

  private def clamp(bytes: Double): Long =
    math.max((1L << 20).toDouble, math.min(bytes, (Long.MaxValue / 2).toDouble)).toLong

  // The commit record's metric names, as Delta names its own.
  val NumOutputRows = "numOutputRows"
  val NumOutputBytes = "numOutputBytes"

  /** Companion splits whose Parquet files are measured for the bytes per row. */
  val CompanionSample = 32
  val NumFiles = "numFiles"
  val ShuffleBytesRead = "shuffleBytesRead"
}

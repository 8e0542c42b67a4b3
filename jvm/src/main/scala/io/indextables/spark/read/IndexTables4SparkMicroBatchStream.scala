package io.indextables.spark.read

import java.util.Locale

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.read.{InputPartition, PartitionReaderFactory}
import org.apache.spark.sql.connector.read.streaming.{CompositeReadLimit, MicroBatchStream, Offset, ReadAllAvailable, ReadLimit, ReadMaxFiles, SupportsAdmissionControl, SupportsTriggerAvailableNow}
import org.apache.spark.sql.types.{DataType, StructType}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.{IndexTablesConf, IndexTablesOptions}
import io.indextables.spark.transaction.{ChangePosition, IndexedSplit, MetadataAction, Snapshot, TableChanges, TransactionLog, VersionFiles}

/**
 * A stream of a table's new rows (`readStream.format("indextables")`, or `readStream.table` of
 * a catalog table), on the driver: each micro-batch reads the splits that the versions since
 * the last one added with new rows, in version order ([[TableChanges]]), at most
 * `maxFilesPerTrigger` of them (a version may span batches). Its first batch is, unless
 * `startingVersion` says otherwise, the table as it stood when the stream started, as Delta's
 * source does. Versions that only merged splits add nothing; one that removed or rewrote rows
 * fails the stream, unless `skipChangeCommits` is set.
 *
 * A batch's tasks are the search route's ([[IndexTables4SparkScan]] planned over exactly the
 * batch's splits, read by [[IndexTables4SparkPartitionReader]]: both layouts, and deletion
 * vectors, as a batch read), each task carrying the plan of its batch ([[PlannedSplitGroup]]):
 * Spark asks a stream for its reader factory once, before it knows the batches.
 *
 * Offsets are [[IndexTablesSourceOffset]]s. Spark calls a stream from one thread at a time.
 *
 * @param in   the scan Spark built when the query started: the table at that version, the
 *             read's options and the columns the stream has (all of the table's then)
 * @param plan that scan's plan, for the reader factory Spark asks for
 */
final class IndexTables4SparkMicroBatchStream private[read] (in: ScanInputs, plan: ReadPlan)
    extends MicroBatchStream with SupportsAdmissionControl with SupportsTriggerAvailableNow {

  private val start = in.table
  private val tablePath = start.tablePath
  private val opts = start.opts
  private val tableId = start.snapshot.metadata.id

  // Settings are checked when the query starts, before any batch.
  IndexTablesOptions.checkOptions(opts.options, opts, "streaming read")
  private val startingVersion =
    opts.getOption(IndexTablesConf.StreamStartingVersion).filter(_.nonEmpty)
  private val maxFilesPerTrigger = opts.get(IndexTablesConf.StreamMaxFilesPerTrigger)
  private val skipChangeCommits = opts.get(IndexTablesConf.StreamSkipChangeCommits)

  // The driver's handle of the table's log (handles of one table share its newest snapshot).
  private lazy val log: TransactionLog = {
    val conf = SparkSession.active.sessionState.newHadoopConfWithOptions(opts.hadoopOptions)
    TransactionLog.forTable(tablePath, conf, opts.logSettings, opts.fileSystemOptions)
  }

  private lazy val changes = TableChanges.of(log, skipChangeCommits, checkColumns)

  /**
   * Fails on a version whose schema has a column the stream does not (added, or of another
   * type): its rows would lose it. A restart reads on with the table's columns then, as
   * Delta's source asks; the stream's older versions' columns are all among them.
   */
  private def checkColumns(version: Long, metadata: MetadataAction): Unit = {
    val columns = in.required.fields.map(f => f.name.toLowerCase(Locale.ROOT) -> f.dataType).toMap
    val schema = DataType.fromJson(metadata.schemaString).asInstanceOf[StructType]
    val changed = schema.fields.filterNot { f =>
      columns.get(f.name.toLowerCase(Locale.ROOT)).contains(f.dataType)
    }
    if (changed.nonEmpty) {
      throw IndexTablesErrors.streamingSourceSchemaChanged(
        tablePath,
        version,
        changed.map(_.name).toSeq)
    }
  }

  // Set by Trigger.AvailableNow: the last version the query reads.
  @volatile private var availableNowEnd: Option[Long] = None

  private def latestVersion: Long =
    log.latestVersion.getOrElse(throw IndexTablesErrors.tableNotFound(tablePath))

  override def initialOffset(): Offset = initial

  // Spark asks again at every trigger until a first batch commits an offset: `latest` is the
  // latest version when it first asked, as Delta's source fixes its starting version once.
  private lazy val initial: IndexTablesSourceOffset = {
    val position = startingVersion match {
      case None => ChangePosition(start.snapshot.version, -1L, isStartingVersion = true)
      case Some("latest") => ChangePosition.before(latestVersion + 1)
      case Some(v) =>
        val version = v.toLong
        val l = log
        val latest = latestVersion
        if (version > latest) {
          throw IndexTablesErrors.versionNotFound(
            l.tablePath,
            version,
            VersionFiles.fileName(version),
            Some(latest))
        }
        val kept = l.listVersions()
        if (!kept.contains(version)) {
          throw IndexTablesErrors.versionRemoved(l.tablePath, version, kept.headOption)
        }
        ChangePosition.before(version)
    }
    IndexTablesSourceOffset(tableId, position)
  }

  override def deserializeOffset(json: String): Offset = offsetOf(json)

  private def offsetOf(json: String): IndexTablesSourceOffset = {
    val offset = IndexTablesSourceOffset.parse(json, tablePath)
    if (offset.tableId != tableId) {
      throw IndexTablesErrors.streamingSourceOffset(
        tablePath,
        json,
        s"it is of table id ${offset.tableId}, and the table at this path now has id " +
          s"$tableId (it was dropped and created again)")
    }
    offset
  }

  // Spark hands back the offsets this stream made or deserialized, whose table it checked.
  private def positionOf(offset: Offset): ChangePosition = offset match {
    case o: IndexTablesSourceOffset => o.position
    case other => offsetOf(other.json()).position
  }

  override def getDefaultReadLimit: ReadLimit = ReadLimit.maxFiles(maxFilesPerTrigger)

  override def prepareForTriggerAvailableNow(): Unit = availableNowEnd = Some(latestVersion)

  override def latestOffset(): Offset =
    throw IndexTablesErrors.internalError("latestOffset() of a stream with admission control")

  /**
   * The offset after the splits a batch from `startOffset` reads under `limit` (up to the
   * table's latest version, or the one Trigger.AvailableNow fixed); null when nothing is new.
   */
  override def latestOffset(startOffset: Offset, limit: ReadLimit): Offset = {
    val from = positionOf(startOffset)
    val last = availableNowEnd.getOrElse(latestVersion)
    val max = maxFiles(limit)
    val read = changes.after(from, last, max)
    val end = changes.end(from, last, read, bounded = max.exists(read.size >= _))
    if (end == from) null else IndexTablesSourceOffset(tableId, end)
  }

  private def maxFiles(limit: ReadLimit): Option[Int] = limit match {
    case m: ReadMaxFiles => Some(m.maxFiles())
    case c: CompositeReadLimit => c.getReadLimits.toSeq.flatMap(maxFiles).reduceOption(_ min _)
    case _: ReadAllAvailable => None // Trigger.Once
    case _ => None
  }

  override def planInputPartitions(startOffset: Offset, endOffset: Offset)
      : Array[InputPartition] = {
    val splits = changes.between(positionOf(startOffset), positionOf(endOffset))
    if (splits.isEmpty) Array.empty
    else {
      val scan = IndexTables4SparkScan.plan(batchInputs(splits), None)
      scan.splitGroups.map(g => PlannedSplitGroup(g, scan.readPlan): InputPartition).toArray
    }
  }

  /**
   * The scan inputs of a batch reading `splits`: the table's newest protocol and metadata over
   * exactly those splits (each names its own doc mapping), no filter, the stream's columns.
   */
  private def batchInputs(splits: Seq[IndexedSplit]): ScanInputs = {
    val now = log.snapshot()
    val snap =
      Snapshot(now.tablePath, now.version, now.protocol, now.metadata, splits.map(_.add), Nil)
    val table = start.copy(snapshot = snap, latest = None)
    ScanInputs(table, FilterPushdown.of(table, Nil), in.required, limit = None)
  }

  override def createReaderFactory(): PartitionReaderFactory =
    new IndexTables4SparkPartitionReaderFactory(plan)

  override def commit(end: Offset): Unit = ()

  override def stop(): Unit = ()

  /** The stream as its query's progress and the Spark UI name it: the table, and its search. */
  override def toString: String =
    s"IndexTablesStream[$tablePath${start.mixedFilter.fold("")(f => s", PushedIndexQuery: [$f]")}]"
}

package io.indextables.spark.merge

import scala.util.Try

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.types.{DataType, StructType}
import org.slf4j.LoggerFactory

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.storage.LogStore
import io.indextables.spark.transaction._
import io.indextables.spark.util.{JobDescription, SerializableHadoopConf}

/**
 * What one merge did.
 *
 * @param status         `success`, `no_action`, `partial` (some groups failed or conflicted)
 *                       or `failed` (no group was committed although some were tried)
 * @param mergedFiles    source splits removed by the commit
 * @param mergeGroups    merged splits added by the commit
 * @param failedGroups   groups whose merge failed (their sources got mergeskip actions)
 * @param conflictGroups groups given up because a concurrent commit removed a source
 * @param version        the version committed, if any
 */
final case class MergeResult(
    status: String,
    mergedFiles: Long,
    mergeGroups: Long,
    originalSizeBytes: Long,
    mergedSizeBytes: Long,
    failedGroups: Long,
    conflictGroups: Long,
    version: Option[Long],
    message: String)

/**
 * Runs one merge of a table's splits, from the driver: plans the groups on the latest snapshot
 * ([[MergePlanner]]), merges them in one Spark job, a task per group ([[SplitMerger]]), and
 * commits the result in one log version.
 *
 * The commit removes each committed group's sources and adds its merged split, all with
 * `dataChange=false`, and records a `mergeskip` for each source of a failed group. It is
 * rebuilt on the newest snapshot at every attempt (a lost race for the version only retries):
 * a group whose sources are all still live is committed; a group with a source a concurrent
 * commit removed (an overwrite, a replaceWhere, another merge) is given up, its merged split
 * deleted, so no row is ever duplicated or lost. Driver side; one call per merge.
 */
object MergeExecutor {

  private val logger = LoggerFactory.getLogger(getClass)

  val Operation: String = "MERGE SPLITS"

  private object NothingToCommit extends RuntimeException with scala.util.control.NoStackTrace

  def run(
      spark: SparkSession,
      log: TransactionLog,
      hadoopConf: Configuration,
      request: MergeRequest,
      settings: MergeSettings,
      includePartition: Map[String, String] => Boolean,
      operation: String = Operation): MergeResult = {
    val snapshot = log.snapshot()
    val groups = MergePlanner.plan(snapshot, request, includePartition, System.currentTimeMillis())
    if (groups.isEmpty) {
      return MergeResult(
        "no_action",
        0,
        0,
        0,
        0,
        0,
        0,
        None,
        request.mergeFactor match {
          case None =>
            "no partition holds two or more splits smaller than " +
              s"${(request.targetSize * MergeRequest.SkipFraction).toLong} bytes to merge"
          case Some(f) =>
            s"no partition holds $f splits of one size tier (or two of the top tier) to merge"
        }
      )
    }
    val spec = MergeTaskSpec(
      log.tablePath.toString,
      new SerializableHadoopConf(hadoopConf),
      DataType.fromJson(snapshot.metadata.schemaString).asInstanceOf[StructType],
      snapshot.metadata.partitionColumns,
      settings.heapSize,
      settings.tempDirectory
    )
    val sc = spark.sparkContext
    val step = s"merging ${JobDescription.count(groups.map(_.sources.size).sum, "split")} in " +
      JobDescription.count(groups.size, "group")
    val outcomes = JobDescription.describing(sc, operation, log.tablePath.toString, step) { _ =>
      sc.parallelize(groups, groups.size).map(g => SplitMerger.merge(spec, g)).collect().toSeq
    }
    commit(log, hadoopConf, outcomes, settings, operation, request)
  }

  private[merge] def commit(
      log: TransactionLog,
      hadoopConf: Configuration,
      outcomes: Seq[MergeOutcome],
      settings: MergeSettings,
      operation: String,
      request: MergeRequest): MergeResult = {
    val merged = outcomes.collect { case m: MergeOutcome.Merged => m }
    val failed = outcomes.collect { case f: MergeOutcome.Failed => f }
    var committed = Seq.empty[MergeOutcome.Merged]
    var conflicted = Seq.empty[MergeOutcome.Merged]
    val parameters = Map(
      "targetSize" -> request.targetSize.toString,
      "maxSourceSplitsPerMerge" -> request.maxSourceSplitsPerMerge.toString
    ) ++ request.maxDestSplits.map(n => "maxDestSplits" -> n.toString) ++
      request.mergeFactor.map(f => "mergeFactor" -> f.toString)
    val version =
      try Some(log.startTransaction().commit(operation, parameters) { current =>
          val snap =
            current.getOrElse(throw IndexTablesErrors.tableNotFound(log.tablePath.toString))
          // A source is live only as it was read: with a deletion vector committed since, the
          // merged split would serve the rows that vector deletes.
          val live = snap.allFiles.iterator.map(_.fileKey).toSet
          val (valid, gone) =
            merged.partition(_.group.sources.forall(s => live.contains(s.fileKey)))
          committed = valid
          conflicted = gone
          val now = System.currentTimeMillis()
          val removes =
            valid.flatMap(_.group.sources).map(_.removed(now, dataChange = false))
          val skips =
            if (!settings.trackSkips) Nil
            else {
              val previous = snap.mergeSkips.map(s => s.path -> s.skipCount).toMap
              failed.flatMap(f =>
                f.group.sources.filter(s => live.contains(s.fileKey)).map { s =>
                  MergeSkipAction(
                    s.path,
                    now,
                    f.reason.take(1000),
                    "merge",
                    Some(now + settings.cooldownHours * 3600L * 1000L),
                    previous.getOrElse(s.path, 0) + 1)
                })
            }
          val actions = removes ++ valid.map(_.add) ++ skips
          if (actions.isEmpty) throw NothingToCommit
          actions
        })
      catch {
        case NothingToCommit => None
        case e: Throwable =>
          delete(log, hadoopConf, merged)
          throw e
      }
    delete(log, hadoopConf, conflicted)
    val sources = committed.flatMap(_.group.sources)
    val status =
      if (failed.isEmpty && conflicted.isEmpty) "success"
      else if (committed.nonEmpty) "partial"
      else "failed"
    val message = Seq(
      Some(s"merged ${sources.size} splits into ${committed.size}"),
      if (failed.isEmpty) None
      else Some(s"${failed.size} merge groups failed and their ${failed.map(_.group.sources.size)
          .sum} splits are skipped until the cooldown ends: " +
        failed.map(f => s"group ${f.group.id}: ${f.reason}").mkString("; ").take(2000)),
      if (conflicted.isEmpty) None
      else Some(s"${conflicted.size} merge groups were given up because a concurrent commit " +
        "removed one of their splits")
    ).flatten.mkString("; ")
    if (failed.nonEmpty) logger.warn(s"$operation of ${log.tablePath}: $message")
    MergeResult(
      status,
      sources.size.toLong,
      committed.size.toLong,
      sources.map(_.size).sum,
      committed.map(_.add.size).sum,
      failed.size.toLong,
      conflicted.size.toLong,
      version,
      message
    )
  }

  /** Deletes merged splits that no commit references; a failure only leaves an orphan. */
  private def delete(log: TransactionLog, conf: Configuration, splits: Seq[MergeOutcome.Merged])
      : Unit = if (splits.nonEmpty) {
    val store = LogStore.forPath(log.tablePath, conf)
    splits.foreach(m => Try(store.delete(new Path(log.tablePath, m.add.path))))
  }
}

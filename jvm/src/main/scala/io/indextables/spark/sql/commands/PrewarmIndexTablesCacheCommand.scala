package io.indextables.spark.sql.commands

import org.apache.spark.SparkEnv
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{DataType, IntegerType, LongType, StringType, StructType}
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.read.{SplitPlacement, SplitPrewarm}

/**
 * `PREWARM INDEXTABLES CACHE '<path>' | <table> [FOR SEGMENTS (TERM_DICT, POSTINGS, ...)]
 * [ON FIELDS (a, b)] [WITH PERWORKER PARALLELISM OF n] [WHERE <partition predicate>]`: loads
 * index components of the table's live splits (term dictionaries and postings by default) into
 * the caches of the executors that will read them: each split goes to the executor the scan
 * places it on ([[SplitPlacement]]), through the same cache manager a read with the session's
 * settings uses. `n` tasks per executor (default 2) share its splits. One row per executor:
 * executor_id string, splits_prewarmed int, splits_on_assigned_executor int (the others ran
 * elsewhere, the assigned executor being busy), segments string, fields string, duration_ms long.
 */
case class PrewarmIndexTablesCacheCommand(
    target: IndexTablesCommandTarget,
    segments: Seq[String],
    fields: Seq[String],
    parallelism: Option[BigInt],
    where: Option[String])
    extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("executor_id", StringType, nullable = false)(),
    AttributeReference("splits_prewarmed", IntegerType, nullable = false)(),
    AttributeReference("splits_on_assigned_executor", IntegerType, nullable = false)(),
    AttributeReference("segments", StringType, nullable = false)(),
    AttributeReference("fields", StringType, nullable = false)(),
    AttributeReference("duration_ms", LongType, nullable = false)()
  )

  override def run(spark: SparkSession): Seq[Row] = {
    val components = SplitPrewarm.components(segments)
    val perExecutor = parallelism.map(_.max(1).min(1024).toInt).getOrElse(2)
    val scan = target.plannedScan(spark, where, "PREWARM INDEXTABLES CACHE")
    val columns = DataType.fromJson(scan.snapshot.metadata.schemaString)
      .asInstanceOf[StructType].fieldNames.toSeq
    fields.foreach { f =>
      if (!columns.exists(_.equalsIgnoreCase(f)))
        throw IndexTablesErrors.prewarmUnknownField(f, columns)
    }
    val plan = scan.readPlan
    val splits = scan.splitGroups.flatMap(_.splits)
    val executors = SplitPlacement.live(spark.sparkContext)
    // (assigned executor id, task location, splits); in local mode the one JVM takes them all.
    val tasks: Seq[(String, Seq[String], Seq[io.indextables.spark.read.SplitInputPartition])] =
      if (executors.isEmpty) {
        val n = math.max(1, spark.sparkContext.defaultParallelism)
        splits.grouped(math.max(1, (splits.size + n - 1) / n)).map(("driver", Nil, _)).toSeq
      } else
        splits.groupBy(s => SplitPlacement.executorOf(s.path, executors).get).toSeq.flatMap {
          case (e, own) =>
            own.grouped(math.max(1, (own.size + perExecutor - 1) / perExecutor))
              .map(g => (e.id, Seq(e.location), g))
        }
    val segmentNames = components.map(_.name()).mkString(",")
    val fieldNames = if (fields.isEmpty) "all" else fields.mkString(",")
    if (tasks.isEmpty) Nil
    else {
      val names = components.map(_.name())
      val results = spark.sparkContext
        .makeRDD(tasks.map { case (assigned, locs, group) => ((assigned, group), locs) })
        .map { case (assigned, group) =>
          val start = System.nanoTime()
          val comps =
            names.map(io.indextables.tantivy4java.split.SplitSearcher.IndexComponent.valueOf)
          val n = SplitPrewarm.prewarm(plan, group, comps, fields)
          val here = SparkEnv.get.executorId
          (here, n, if (here == assigned) n else 0, (System.nanoTime() - start) / 1000000L)
        }
        .collect()
      results.groupBy(_._1).toSeq.sortBy(_._1).map { case (id, rs) =>
        Row(id, rs.map(_._2).sum, rs.map(_._3).sum, segmentNames, fieldNames, rs.map(_._4).sum)
      }
    }
  }
}

package io.indextables.spark.write

import java.util.UUID

import org.apache.spark.sql.connector.write.{BatchWrite, DataWriterFactory, PhysicalWriteInfo, WriterCommitMessage}

import io.indextables.spark.config.IndexTablesConf
import io.indextables.spark.transaction._

/**
 * The driver's side of one write: hands the plan to tasks, then commits every task's splits as
 * one new log version (removing all live files first when overwriting). On abort it deletes the
 * splits that tasks reported, and nothing else.
 *
 * @param logOptions options for the transaction log (retries, compression)
 */
final class IndexTables4SparkBatchWrite(
    plan: WritePlan,
    overwrite: Boolean,
    logOptions: Map[String, String]) extends BatchWrite {

  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory =
    new IndexTables4SparkDataWriterFactory(plan)

  override def useCommitCoordinator(): Boolean = true

  override def commit(messages: Array[WriterCommitMessage]): Unit = {
    val adds = messages.toSeq.flatMap {
      case IndexTablesCommitMessage(a) => a
      case _ => Nil
    }
    val log = TransactionLog.forTable(plan.tablePath, plan.hadoopConf.value, logOptions)
    val operation = if (overwrite) "OVERWRITE" else "WRITE"
    try {
      log.startTransaction().commit(operation) { current =>
        CommitActions.build(current, plan, adds, overwrite)
      }
    } catch {
      case e: Throwable =>
        abort(messages)
        throw e
    }
  }

  override def abort(messages: Array[WriterCommitMessage]): Unit = {
    val uploader = new SplitUploader(plan)
    messages.foreach {
      case IndexTablesCommitMessage(a) => a.foreach(add => uploader.delete(add.path))
      case _ =>
    }
  }
}

/** The actions of one write's commit, rebuilt from the latest snapshot on every retry. */
object CommitActions {
  val ReaderVersion = 4
  val WriterVersion = 4
  val DocMappingSchemaPrefix = "docMappingSchema."

  def build(
      current: Option[Snapshot],
      plan: WritePlan,
      adds: Seq[AddAction],
      overwrite: Boolean): Seq[Action] = {
    val now = System.currentTimeMillis()
    // Schema deduplication: each distinct doc mapping is stored once in the metadata.
    val withRefs = adds.map { a =>
      a.docMappingJson match {
        case Some(json) => (a.copy(docMappingJson = None, docMappingRef = Some(SchemaHash.compute(json))), Some(json))
        case None => (a, None)
      }
    }
    val registry = withRefs.collect { case (a, Some(json)) =>
      (DocMappingSchemaPrefix + a.docMappingRef.get) -> json
    }.toMap
    val tableConfig = plan.indexSchema.typemap.map { case (c, t) => (IndexTablesConf.TypemapPrefix + c) -> t }

    val (header, removes) = current match {
      case None =>
        val protocol = ProtocolAction(ReaderVersion, WriterVersion)
        (Seq(protocol, newMetadata(plan, tableConfig ++ registry, now)), Nil)
      case Some(snap) if overwrite =>
        val rm = snap.allFiles.map(f => RemoveAction(f.path, Some(now), dataChange = true,
          Some(f.partitionValues), Some(f.size)))
        val kept = snap.metadata.configuration.filter(_._1.startsWith(DocMappingSchemaPrefix))
        val md = snap.metadata.copy(
          schemaString = plan.writeSchema.json,
          partitionColumns = plan.indexSchema.partitionColumns,
          configuration = kept ++ tableConfig ++ registry)
        (Seq(md), rm)
      case Some(snap) =>
        val missing = registry.filterNot { case (k, _) => snap.metadata.configuration.contains(k) }
        if (missing.isEmpty) (Nil, Nil)
        else (Seq(snap.metadata.copy(configuration = snap.metadata.configuration ++ missing)), Nil)
    }
    header ++ removes ++ withRefs.map(_._1)
  }

  private def newMetadata(plan: WritePlan, configuration: Map[String, String], now: Long) =
    MetadataAction(
      id = UUID.randomUUID().toString,
      schemaString = plan.writeSchema.json,
      partitionColumns = plan.indexSchema.partitionColumns,
      configuration = configuration,
      createdTime = Some(now))
}

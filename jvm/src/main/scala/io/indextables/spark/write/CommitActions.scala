package io.indextables.spark.write

import java.util.UUID

import io.indextables.spark.config.IndexTablesConf
import io.indextables.spark.transaction._

/** The actions of one write's commit, rebuilt from the latest snapshot on every retry. */
object CommitActions {

  def build(
      current: Option[Snapshot],
      plan: WritePlan,
      adds: Seq[AddAction],
      overwrite: Boolean): Seq[Action] = {
    val now = System.currentTimeMillis()
    // Schema deduplication: each distinct doc mapping is stored once in the metadata.
    val withRefs = adds.map { a =>
      a.docMappingJson match {
        case Some(json) => (
            a.copy(docMappingJson = None, docMappingRef = Some(SchemaHash.compute(json))),
            Some(json))
        case None => (a, None)
      }
    }
    val registry = withRefs.collect { case (a, Some(json)) =>
      SchemaHash.registryKey(a.docMappingRef.get) -> json
    }.toMap
    val tableConfig = plan.indexSchema.typemap.map { case (c, t) =>
      (IndexTablesConf.TypemapPrefix + c) -> t
    }

    val (header, removes) = current match {
      case None =>
        (Seq(ProtocolAction.current, newMetadata(plan, tableConfig ++ registry, now)), Nil)
      case Some(snap) if overwrite =>
        val rm = snap.allFiles.map(f =>
          RemoveAction(
            f.path,
            Some(now),
            dataChange = true,
            Some(f.partitionValues),
            Some(f.size)))
        val kept = snap.metadata.configuration.filter(_._1.startsWith(SchemaHash.RegistryKeyPrefix))
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
      createdTime = Some(now)
    )
}

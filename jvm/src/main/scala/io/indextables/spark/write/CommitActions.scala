package io.indextables.spark.write

import java.util.{Locale, UUID}

import org.apache.spark.sql.types.DataType

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.schema.IndexingRequest
import io.indextables.spark.transaction._

/** The actions of one write's commit, rebuilt from the latest snapshot on every retry. */
object CommitActions {

  /**
   * @param replacesTable whether the write replaces the whole table, schema and partitioning
   *                      included (a full overwrite); otherwise the table's metadata stays
   * @param removed       the live splits the write replaces
   * @param txn           the streaming batch this write commits, recorded in the version's
   *                      metadata (see [[StreamingTxn]]); None for a batch write
   */
  def build(
      current: Option[Snapshot],
      plan: WritePlan,
      adds: Seq[AddAction],
      replacesTable: Boolean,
      removed: Seq[AddAction],
      txn: Option[StreamingTxn] = None): Seq[Action] = {
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
    // The indexing keys as the resolved index schema records them, over the other properties.
    val tableConfig = plan.tableProperties.filterNot(p => isIndexingKey(p._1)) ++
      plan.indexSchema.indexingConfiguration

    val removes = removed.map(f =>
      f.removed(now, dataChange = true))
    val layout = plan.companion.map(c => TableLayout.companionConfiguration(c.fastFieldMode))
      .getOrElse(Map.empty)
    val header = current match {
      case None =>
        val features: Set[String] =
          if (plan.companion.isDefined) TableLayout.Companion.features else Set.empty
        Seq(
          TableFeatures.protocolWith(features),
          newMetadata(plan, tableConfig ++ layout ++ registry, now))
      case Some(snap) if replacesTable =>
        // The schema registry and the table's other properties stay; the indexing is the new one.
        val kept = snap.metadata.configuration.filterNot(p => isIndexingKey(p._1))
        Seq(snap.metadata.copy(
          schemaString = plan.writeSchema.json,
          partitionColumns = plan.indexSchema.partitionColumns,
          configuration = kept ++ tableConfig ++ registry))
      case Some(snap) if plan.schemaChange.isDefined =>
        // New columns, recorded with their indexing, on the schema the write was planned on.
        val change = plan.schemaChange.get
        if (DataType.fromJson(snap.metadata.schemaString) != change.from)
          throw IndexTablesErrors.schemaChangedConcurrently(plan.tablePath)
        Seq(snap.metadata.copy(
          schemaString = change.to.json,
          configuration = snap.metadata.configuration ++ tableConfig ++ registry))
      case Some(snap) =>
        val missing = registry.filterNot { case (k, _) => snap.metadata.configuration.contains(k) }
        if (missing.isEmpty) Nil
        else Seq(snap.metadata.copy(configuration = snap.metadata.configuration ++ missing))
    }
    recorded(header, current, txn) ++ removes ++ withRefs.map(_._1)
  }

  /** `header` with `txn` recorded in its metadata action (the current one if it has none). */
  private def recorded(
      header: Seq[Action],
      current: Option[Snapshot],
      txn: Option[StreamingTxn]): Seq[Action] = txn match {
    case None => header
    case Some(t) if header.exists(_.isInstanceOf[MetadataAction]) =>
      header.map {
        case m: MetadataAction => t.recordIn(m)
        case other => other
      }
    case Some(t) =>
      val snap = current.getOrElse(
        throw IndexTablesErrors.internalError("a new table's commit without its metadata"))
      header :+ t.recordIn(snap.metadata)
  }

  /** A key of how the table indexes its columns (`spark.indextables.indexing.*`). */
  def isIndexingKey(key: String): Boolean =
    key.toLowerCase(Locale.ROOT).startsWith(IndexingRequest.IndexingPrefix)

  private def newMetadata(plan: WritePlan, configuration: Map[String, String], now: Long) =
    MetadataAction(
      id = UUID.randomUUID().toString,
      schemaString = plan.writeSchema.json,
      partitionColumns = plan.indexSchema.partitionColumns,
      configuration = configuration,
      createdTime = Some(now)
    )
}

package io.indextables.spark.transaction

import io.indextables.spark.IndexTablesErrors

/**
 * What one version did to a table's rows, as a stream of the table's new rows sees it.
 * Immutable.
 *
 * @param added       the splits it added with new rows (`dataChange=true` adds), in the order of
 *                    its version file; a merge's adds (`dataChange=false`) are not new rows
 * @param removesData whether it removed or rewrote rows: a `dataChange=true` remove, which an
 *                    overwrite, a replaceWhere, DROP PARTITIONS, a DELETE, UPDATE or MERGE (a
 *                    split's new deletion vector is a remove and an add of it) and a companion
 *                    sync's dropped files write
 * @param metadata    the version's metadata action, if it has one (its schema registry names
 *                    the doc mappings of the splits it added)
 */
final case class VersionChanges(
    version: Long,
    added: Seq[AddAction],
    removesData: Boolean,
    metadata: Option[MetadataAction])

object VersionChanges {

  /**
   * The changes of version `version`, whose version file holds `actions`. An added split whose
   * doc mapping the version's own schema registry holds carries it inline (a later version's
   * registry need not keep it).
   */
  def of(version: Long, actions: Seq[Action]): VersionChanges = {
    val metadata = actions.collectFirst { case m: MetadataAction => m }
    val registry =
      metadata.fold(Map.empty[String, String])(m => SchemaHash.registry(m.configuration))
    VersionChanges(
      version,
      actions.collect {
        case a: AddAction if a.dataChange =>
          a.copy(docMappingJson = a.docMappingJson.orElse(a.docMappingRef.flatMap(registry.get)))
      },
      actions.exists { case r: RemoveAction => r.dataChange; case _ => false },
      metadata
    )
  }
}

/**
 * A place in a table's stream of added splits: every split up to and including the one at
 * `index` of `version` has been read (`index` -1: none of `version`). The splits of a version
 * are, when `isStartingVersion`, every live split of the table at that version (a stream's
 * first batch: the table as it stood), ordered by modification time and path; otherwise the
 * splits the version added with new rows ([[VersionChanges.added]]), in its version file's
 * order. Immutable.
 */
final case class ChangePosition(version: Long, index: Long, isStartingVersion: Boolean) {

  /** Whether the split at `index` of `version` lies at or before this place. */
  def covers(splitVersion: Long, splitIndex: Long): Boolean =
    splitVersion < version || (splitVersion == version && splitIndex <= index)
}

object ChangePosition {

  /** Before every split of `version`, read as its version's changes. */
  def before(version: Long): ChangePosition =
    ChangePosition(version, -1L, isStartingVersion = false)
}

/** One split of a stream of added splits, at its place: the split at `index` of `version`. */
final case class IndexedSplit(
    version: Long,
    index: Long,
    isStartingVersion: Boolean,
    add: AddAction) {
  def position: ChangePosition = ChangePosition(version, index, isStartingVersion)
}

/**
 * Walks a table's versions in order, as a streaming read of its new rows does: the splits each
 * version added with new rows, from a [[ChangePosition]] on. A version that only merged splits
 * adds none; a version that removed or rewrote rows fails the walk with
 * `INDEXTABLES_STREAMING_SOURCE_DATA_CHANGED`, naming it, unless `skipChangeCommits` is set,
 * when it adds nothing (its adds are part of the change, as Delta's source skips such a
 * commit whole). Reads version files lazily, one at a time, so a walk that stops early reads
 * no more of them. Driver side; one thread at a time.
 *
 * @param tablePath      the table, for error messages
 * @param startingFiles  every live split of the table at a version (a starting version's
 *                       splits), each naming its doc mapping inline
 * @param changes        the changes of a version ([[VersionChanges.of]] over its version file)
 * @param operation      the operation a version's commit record names, if any, for the error
 * @param checkMetadata  checks the metadata action of each version walked after the starting
 *                       one, skipped or not (a stream fails on columns it does not have)
 */
final class TableChanges(
    tablePath: String,
    startingFiles: Long => Seq[AddAction],
    changes: Long => VersionChanges,
    operation: Long => Option[String],
    skipChangeCommits: Boolean,
    checkMetadata: (Long, MetadataAction) => Unit = (_, _) => ()) {

  /**
   * The splits after `from`, through version `lastVersion`, in order; with `maxFiles`, no more
   * than that many (a version may then be split between two batches).
   */
  def after(from: ChangePosition, lastVersion: Long, maxFiles: Option[Int] = None)
      : Seq[IndexedSplit] = {
    val all = splitsFrom(from, lastVersion)
    maxFiles.fold(all.toVector)(n => all.take(n).toVector)
  }

  /**
   * The splits after `from` and at or before `to`. Reads no version after the last one `to`
   * covers (a later one may be a change this range does not reach).
   */
  def between(from: ChangePosition, to: ChangePosition): Seq[IndexedSplit] = {
    val lastVersion = if (to.index < 0) to.version - 1 else to.version
    splitsFrom(from, lastVersion).filter(s => to.covers(s.version, s.index)).toVector
  }

  /**
   * Where a walk from `from` through `lastVersion` that read `read` stands: after its last
   * split, when a file bound stopped it inside a version; else after `lastVersion` whole.
   */
  def end(from: ChangePosition, lastVersion: Long, read: Seq[IndexedSplit], bounded: Boolean)
      : ChangePosition =
    read.lastOption match {
      case Some(last) if bounded => last.position
      case _ if lastVersion < from.version => from
      case _ => ChangePosition.before(lastVersion + 1)
    }

  private def splitsFrom(from: ChangePosition, lastVersion: Long): Iterator[IndexedSplit] = {
    val first = if (from.version > lastVersion) Iterator.empty
    else splitsOf(from.version, from.isStartingVersion).filter(_.index > from.index)
    val later = Iterator.range(0, math.max(0L, lastVersion - from.version).toInt)
      .map(i => from.version + 1 + i)
      .flatMap(v => splitsOf(v, isStartingVersion = false))
    first ++ later
  }

  private def splitsOf(version: Long, isStartingVersion: Boolean): Iterator[IndexedSplit] = {
    val adds =
      if (isStartingVersion) startingFiles(version).sortBy(a => (a.modificationTime, a.path))
      else {
        val c = changes(version)
        c.metadata.foreach(checkMetadata(version, _))
        if (!c.removesData) c.added
        else if (skipChangeCommits) Nil
        else throw IndexTablesErrors.streamingSourceDataChanged(
          tablePath,
          version,
          operation(version))
      }
    adds.iterator.zipWithIndex.map { case (a, i) =>
      IndexedSplit(version, i.toLong, isStartingVersion, a)
    }
  }
}

object TableChanges {

  /**
   * The changes of the table of `log`; the splits of the last starting version are kept.
   * `checkMetadata` as [[TableChanges]] takes it.
   */
  def of(
      log: TransactionLog,
      skipChangeCommits: Boolean,
      checkMetadata: (Long, MetadataAction) => Unit = (_, _) => ()): TableChanges = {
    var starting: Option[(Long, Seq[AddAction])] = None // one thread at a time
    def startingFiles(version: Long): Seq[AddAction] = starting match {
      case Some((v, files)) if v == version => files
      case _ =>
        val snap = log.snapshotAt(version)
        val files = snap.allFiles.map(a => a.copy(docMappingJson = snap.docMappingFor(a)))
        starting = Some(version -> files)
        files
    }
    new TableChanges(
      log.tablePath.toString,
      startingFiles,
      v => VersionChanges.of(v, log.actionsOf(v)),
      v => log.commitInfo(v).map(_.operation),
      skipChangeCommits,
      checkMetadata)
  }
}

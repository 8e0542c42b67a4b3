package io.indextables.spark.transaction

import org.apache.hadoop.fs.Path

/**
 * The state of a table at one version, as replayed from its log by [[LogReplay]]. Immutable and
 * thread-safe; cheap to share between threads on the driver.
 *
 * @param allFiles   live splits: an add replaces an earlier add of the same path, and a remove
 *                   drops it. In order of first addition.
 * @param tombstones the latest remove of every path that is not live again.
 * @param mergeSkips the latest mergeskip of every path.
 * @param stateBase  the Avro state this snapshot was replayed from, if any, so that the next
 *                   checkpoint can reuse its manifests.
 */
final case class Snapshot(
    tablePath: Path,
    version: Long,
    protocol: ProtocolAction,
    metadata: MetadataAction,
    allFiles: Seq[AddAction],
    tombstones: Seq[RemoveAction],
    mergeSkips: Seq[MergeSkipAction] = Seq.empty,
    stateBase: Option[StateBase] = None) {

  /** Doc mapping JSON by hash, from the `docMappingSchema.<hash>` configuration entries. */
  lazy val schemaRegistry: Map[String, String] =
    metadata.configuration.collect {
      case (k, v) if k.startsWith(SchemaHash.RegistryKeyPrefix) && v != null =>
        k.stripPrefix(SchemaHash.RegistryKeyPrefix) -> v
    }

  /** The doc mapping of a split: inline `docMappingJson`, else the registry entry it refers to. */
  def docMappingFor(add: AddAction): Option[String] =
    add.docMappingJson.orElse(add.docMappingRef.flatMap(schemaRegistry.get))

  def numFiles: Int = allFiles.size

  def sizeInBytes: Long = allFiles.iterator.map(_.size).sum
}

/**
 * What an incremental Avro checkpoint needs of the state it builds on: its directory, its
 * manifest, the paths of every entry of its manifests (tombstoned ones included), and the paths
 * among them that version files replayed after the state added again (their entries are stale).
 */
final case class StateBase(
    stateDir: String,
    manifest: io.indextables.spark.transaction.state.StateManifest,
    entryPaths: Set[String],
    readded: Set[String] = Set.empty)

package io.indextables.spark.transaction

import org.apache.hadoop.fs.Path

import io.indextables.spark.transaction.state.{FileEntry, PartitionBounds}

/**
 * The state of a table at one version. Immutable and thread-safe; cheap to share between
 * threads on the driver.
 *
 * The version, protocol and metadata are known when the snapshot is built. The files are loaded
 * on first use, so that what needs only the metadata (planning a read, an append commit) does not
 * read the whole state of a large table. [[filesMatching]] loads only the Avro manifests whose
 * partition bounds a read can match, unless the files are loaded already.
 *
 * The file state, once loaded:
 *  - `allFiles`: live splits. An add replaces an earlier add of the same path, and a remove drops
 *    it. In order of first addition.
 *  - `tombstones`: the latest remove of every path that is not live again.
 *  - `mergeSkips`: the latest mergeskip of every path.
 *  - `stateBase`: the Avro state this snapshot was replayed from, if any, so that the next
 *    checkpoint can reuse its manifests.
 */
final class Snapshot private[transaction] (
    val tablePath: Path,
    val version: Long,
    val protocol: ProtocolAction,
    val metadata: MetadataAction,
    loader: Snapshot.FileLoader,
    /** How many unloaded snapshots a load of this one replays through. */
    private[transaction] val pendingDepth: Int) {

  @volatile private var pending: Snapshot.FileLoader = loader

  private lazy val files: Snapshot.Files = {
    val loaded = pending.loadAll()
    pending = null // what the loader holds (a base snapshot, version files) can now go
    loaded
  }

  /** Live splits with the version that added each one (see [[state.FileEntry]]). */
  def entries: Seq[FileEntry] = files.entries
  lazy val allFiles: Seq[AddAction] = files.entries.map(_.add)
  def tombstones: Seq[RemoveAction] = files.tombstones
  def mergeSkips: Seq[MergeSkipAction] = files.mergeSkips
  def stateBase: Option[StateBase] = files.stateBase

  /** True once the file state is in memory. */
  def filesLoaded: Boolean = pending == null

  /**
   * The live splits that may lie in partitions the filters accept: every live split when the
   * files are loaded; otherwise the live splits of the Avro manifests whose partition bounds
   * `keep` accepts and whose partition values `keepPartition` accepts, plus every split added
   * after the state. `keep` is given the bounds of each partition column of a manifest and
   * answers false only when no split of it can match; `keepPartition` is given a split's
   * partition values (every partition column, null for SQL NULL).
   */
  def filesMatching(
      keep: Snapshot.ManifestFilter,
      keepPartition: Snapshot.PartitionFilter = Snapshot.AnyPartition): Seq[AddAction] = {
    val p = pending
    if (p == null) allFiles else p.loadMatching(keep, keepPartition)
  }

  // What readers derive from this snapshot alone, computed once (see `derived`).
  private val derivations = new java.util.concurrent.ConcurrentHashMap[Any, AnyRef]()

  /**
   * `f`, computed once per snapshot for `key`: for values that depend on this snapshot's state
   * alone (a split's index schema, say), which every query of the table would otherwise derive
   * again. A snapshot never changes, so neither does the value. `key` names both what is
   * derived and from what, so that two derivations never share one. `f` may itself derive
   * (it runs outside the map's lock); two threads may both compute it, and one value is kept.
   */
  def derived[T <: AnyRef](key: Any)(f: => T): T = {
    val known = derivations.get(key)
    if (known != null) known.asInstanceOf[T]
    else {
      val value: AnyRef = f
      val raced = derivations.putIfAbsent(key, value)
      (if (raced != null) raced else value).asInstanceOf[T]
    }
  }

  /** Doc mapping JSON by hash, from the `docMappingSchema.<hash>` configuration entries. */
  lazy val schemaRegistry: Map[String, String] = SchemaHash.registry(metadata.configuration)

  /** The doc mapping of a split: inline `docMappingJson`, else the registry entry it refers to. */
  def docMappingFor(add: AddAction): Option[String] =
    add.docMappingJson.orElse(add.docMappingRef.flatMap(schemaRegistry.get))

  def numFiles: Int = allFiles.size

  def sizeInBytes: Long = allFiles.iterator.map(_.size).sum

  /** This snapshot with its files loaded and `base` as the state they were replayed from. */
  private[transaction] def withStateBase(base: StateBase): Snapshot = {
    val f = files.copy(stateBase = Some(base))
    new Snapshot(tablePath, version, protocol, metadata, Snapshot.Loaded(f), 0)
  }

  override def toString: String = s"Snapshot($tablePath, version $version)"
}

object Snapshot {

  /** Partition bounds of a manifest, by column, to whether a read can match any of its splits. */
  type ManifestFilter = Map[String, PartitionBounds] => Boolean

  val KeepAll: ManifestFilter = _ => true

  /** A split's partition values to whether a read can match it. */
  type PartitionFilter = Map[String, String] => Boolean

  val AnyPartition: PartitionFilter = _ => true

  /** The loaded file state of a snapshot; see [[Snapshot]]. */
  private[transaction] final case class Files(
      entries: Vector[FileEntry],
      tombstones: Vector[RemoveAction],
      mergeSkips: Vector[MergeSkipAction],
      stateBase: Option[StateBase])

  /** Where a snapshot's files come from. Implementations must be thread-safe. */
  private[transaction] trait FileLoader {
    def loadAll(): Files
    def loadMatching(keep: ManifestFilter, keepPartition: PartitionFilter): Seq[AddAction]
  }

  private[transaction] final case class Loaded(files: Files) extends FileLoader {
    def loadAll(): Files = files
    def loadMatching(keep: ManifestFilter, keepPartition: PartitionFilter): Seq[AddAction] =
      files.entries.map(_.add)
  }

  /** A snapshot of files already in memory; entries carry `version` as their added-at version. */
  def apply(
      tablePath: Path,
      version: Long,
      protocol: ProtocolAction,
      metadata: MetadataAction,
      allFiles: Seq[AddAction],
      tombstones: Seq[RemoveAction],
      mergeSkips: Seq[MergeSkipAction] = Seq.empty,
      stateBase: Option[StateBase] = None): Snapshot = {
    val entries = allFiles.iterator.map(a => FileEntry(a, version, a.modificationTime)).toVector
    val f = Files(entries, tombstones.toVector, mergeSkips.toVector, stateBase)
    val s = new Snapshot(tablePath, version, protocol, metadata, Loaded(f), 0)
    s.files // loaded: nothing to defer
    s
  }
}

/**
 * What an incremental Avro checkpoint needs of the state it builds on: its directory, its
 * manifest, the paths of every entry of its manifests (tombstoned ones included; computed on
 * first use, since only a checkpoint needs them), and the paths that version files replayed
 * after the state may have added again (their entries would be stale).
 */
final class StateBase(
    val stateDir: String,
    val manifest: io.indextables.spark.transaction.state.StateManifest,
    paths: () => Set[String],
    val readded: Set[String]) {

  lazy val entryPaths: Set[String] = paths()

  def withReadded(more: collection.Set[String]): StateBase =
    if (more.isEmpty) this else new StateBase(stateDir, manifest, () => entryPaths, readded ++ more)
}

object StateBase {
  def apply(
      stateDir: String,
      manifest: io.indextables.spark.transaction.state.StateManifest,
      entryPaths: => Set[String]): StateBase =
    new StateBase(stateDir, manifest, () => entryPaths, Set.empty)
}

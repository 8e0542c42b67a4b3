package io.indextables.spark.transaction

import java.io.FileNotFoundException

import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.ObjectMapper
import org.apache.hadoop.fs.Path

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.transaction.state.{AvroStateReader, FileEntry, StateManifest}
import io.indextables.spark.storage.LogStore

/**
 * Builds the [[Snapshot]] a checkpoint holds, for the three checkpoint forms: the Avro state
 * (`state-v<version>/_manifest.avro` and the manifests it references), the single-file JSON
 * checkpoint and the multi-part JSON checkpoint. Driver side; stateless.
 *
 * An Avro state need not carry the metadata (0.5.4 leaves it null) nor the protocol; they are
 * then taken from the newest version files at or before the checkpoint that hold them, and the
 * protocol defaults to the state's `protocolVersion` for both reader and writer.
 */
private[transaction] object CheckpointReader {

  private val mapper = new ObjectMapper()

  /** A checkpoint that exists on storage: its version and how to read it. */
  sealed trait Source { def version: Long }
  final case class AvroSource(version: Long, stateDir: String) extends Source
  final case class JsonSource(version: Long) extends Source

  def sourceOf(cp: LastCheckpoint): Source =
    if (cp.isAvroState) {
      AvroSource(cp.version, cp.stateDir.getOrElse(LastCheckpoint.stateDirName(cp.version)))
    } else JsonSource(cp.version)

  def jsonCheckpointName(version: Long): String = f"$version%020d.checkpoint.json"

  private val JsonCheckpointPattern = """^(\d{20})\.checkpoint\.json$""".r

  def versionOfJsonCheckpoint(name: String): Option[Long] = name match {
    case JsonCheckpointPattern(d) => Some(d.toLong)
    case _ => None
  }

  /**
   * Reads the snapshot of checkpoint `source`.
   *
   * @param olderVersions version files present at or before the checkpoint, for metadata and
   *                      protocol that an Avro state does not hold
   * @param readVersion   reads one version file
   */
  def read(
      tablePath: Path,
      logPath: Path,
      store: LogStore,
      source: Source,
      parallelism: Int,
      olderVersions: Seq[Long],
      readVersion: Long => Seq[Action]): Snapshot = source match {
    case AvroSource(version, stateDir) =>
      readAvro(
        tablePath,
        logPath,
        store,
        version,
        stateDir,
        parallelism,
        olderVersions,
        readVersion)
    case JsonSource(version) => readJson(tablePath, logPath, store, version)
  }

  private def readAvro(
      tablePath: Path,
      logPath: Path,
      store: LogStore,
      version: Long,
      stateDir: String,
      parallelism: Int,
      olderVersions: Seq[Long],
      readVersion: Long => Seq[Action]): Snapshot = {
    val m = AvroStateReader.readManifest(store, logPath, stateDir)
    val file = AvroStateReader.stateManifestPath(logPath, stateDir)
    TableFeatures.checkReaderVersion(tablePath, Some(file), m.protocolVersion)
    if (m.stateVersion != version) {
      throw IndexTablesErrors.unreadableVersionFile(
        file,
        s"it holds state version ${m.stateVersion}, but version $version was expected")
    }
    val stateMetadata = m.metadata.map(json => parseMetadata(file, json))
    var protocol: Option[ProtocolAction] = None
    var metadata = stateMetadata
    // Walk back through the version files only as far as needed (0.5.4 states hold neither).
    val it = olderVersions.filter(_ <= version).sorted.reverseIterator
    while (metadata.isEmpty && it.hasNext) {
      val actions = readVersion(it.next())
      if (protocol.isEmpty) protocol = actions.reverseIterator.collectFirst {
        case p: ProtocolAction => p
      }
      metadata = actions.reverseIterator.collectFirst { case a: MetadataAction => a }
    }
    val md = metadata.getOrElse(
      throw IndexTablesErrors.missingProtocolOrMetadata(tablePath, version, "metaData"))
    val (p, configuration) = TableFeatures.fromState(
      protocol.getOrElse(TableFeatures.protocolOfState(m.protocolVersion, md)),
      md.configuration)
    TableFeatures.checkReadable(tablePath, None, p)
    val registry = m.schemaRegistry.map { case (h, json) => SchemaHash.registryKey(h) -> json }
    val mergedMetadata = md.copy(configuration = registry ++ configuration)
    new Snapshot(
      tablePath,
      version,
      p,
      mergedMetadata,
      new AvroLoader(store, logPath, stateDir, m, parallelism, md.partitionColumns),
      0)
  }

  /** The files of an Avro state, all of them or those of the manifests a read can match. */
  private final class AvroLoader(
      store: LogStore,
      logPath: Path,
      stateDir: String,
      manifest: StateManifest,
      parallelism: Int,
      partitionColumns: Seq[String]) extends Snapshot.FileLoader {

    def loadAll(): Snapshot.Files = {
      val state = AvroStateReader.readEntries(
        store,
        logPath,
        stateDir,
        manifest,
        parallelism,
        _ => true)
      val tombstones = manifest.tombstones.map(path => RemoveAction(path, None, dataChange = true))
      Snapshot.Files(
        state.live.map(withNullPartitions).toVector,
        tombstones.toVector,
        Vector.empty,
        Some(StateBase(stateDir, manifest, state.entryPaths)))
    }

    def loadMatching(keep: Snapshot.ManifestFilter, keepPartition: Snapshot.PartitionFilter)
        : Seq[AddAction] = {
      val byValues: Map[String, String] => Boolean =
        if (keepPartition eq Snapshot.AnyPartition) null else pv => keepPartition(withNulls(pv))
      AvroStateReader.readEntries(
        store,
        logPath,
        stateDir,
        manifest,
        parallelism,
        m => m.partitionBounds.forall(keep),
        byValues,
        if (keep eq Snapshot.KeepAll) null else keep).live.map(e => withNullPartitions(e).add)
    }

    private def withNulls(pv: Map[String, String]): Map[String, String] =
      if (partitionColumns.forall(pv.contains)) pv
      else pv ++ partitionColumns.filterNot(pv.contains).map(_ -> (null: String))

    // Avro maps cannot hold nulls, so a SQL NULL partition value is an absent key.
    private def withNullPartitions(e: FileEntry): FileEntry = {
      val missing = partitionColumns.filterNot(e.add.partitionValues.contains)
      if (missing.isEmpty) e
      else e.copy(add = e.add.copy(
        partitionValues = e.add.partitionValues ++ missing.map(_ -> (null: String))))
    }
  }

  /** The metadata field of a state: `{"metaData":{...}}` as protocol.md shows, or the bare body. */
  private def parseMetadata(file: Path, json: String): MetadataAction =
    try {
      val trimmed = json.trim
      val wrapped =
        if (trimmed.startsWith("{\"metaData\"")) trimmed else s"""{"metaData":$trimmed}"""
      ActionSerde.fromJson(wrapped) match {
        case md: MetadataAction => md
        case other => throw IndexTablesErrors.malformedAction(s"expected metaData, got $other")
      }
    } catch {
      case NonFatal(e) =>
        throw IndexTablesErrors.unreadableVersionFile(
          file,
          s"its metadata field is not a metaData action (${e.getMessage})",
          e)
    }

  private def readJson(tablePath: Path, logPath: Path, store: LogStore, version: Long)
      : Snapshot = {
    val file = new Path(logPath, jsonCheckpointName(version))
    val bytes = readFile(store, file)
    val actions = multiPartParts(file, bytes) match {
      case Some(parts) =>
        parts.flatMap { name =>
          val part = new Path(logPath, name)
          VersionFiles.decode(part, readFile(store, part))
        }
      case None => VersionFiles.decode(file, bytes)
    }
    LogReplay.replay(tablePath, None, Seq(version -> actions))
  }

  /** The part file names when `bytes` is a multi-part checkpoint manifest, else None. */
  private def multiPartParts(file: Path, bytes: Array[Byte]): Option[Seq[String]] = {
    if (bytes.isEmpty || bytes(0) != '{'.toByte) return None
    val root =
      try Some(mapper.readTree(bytes))
      catch { case NonFatal(_) => None }
    root.filter(r => r.isObject && r.has("parts") && r.has("checkpointId")).map { r =>
      val parts = r.get("parts")
      if (!parts.isArray || parts.size() == 0) {
        throw IndexTablesErrors.unreadableVersionFile(
          file,
          "the multi-part manifest lists no parts")
      }
      (0 until parts.size()).map(i => parts.get(i).asText())
    }
  }

  private def readFile(store: LogStore, file: Path): Array[Byte] =
    try store.read(file)
    catch {
      case e: FileNotFoundException =>
        throw IndexTablesErrors.unreadableVersionFile(file, "the checkpoint file is missing", e)
    }

}

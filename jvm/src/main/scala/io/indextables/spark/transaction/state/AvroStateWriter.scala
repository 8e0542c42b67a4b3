package io.indextables.spark.transaction.state

import java.util.UUID

import org.apache.avro.file.CodecFactory
import org.apache.hadoop.fs.Path

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.storage.LogStore
import io.indextables.spark.transaction.{ActionSerde, AddAction, SchemaHash, TableFeatures}
import io.indextables.spark.transaction.{Snapshot, StateBase}

/**
 * Settings of one Avro state write, from the `spark.indextables.state.*` keys.
 *
 * @param tombstoneThreshold compaction when tombstones exceed this share of all entries
 * @param maxManifests       compaction when the state would reference more manifests
 * @param forceCompaction    rewrite every live entry into new manifests regardless
 * @param renormalizeThreshold above this many distinct docMappingRefs, every ref is re-hashed
 *                           with the canonical rule, merging schemas hashed from differently
 *                           ordered JSON (the state is then compacted)
 */
final case class AvroStateConfig(
    codec: CodecFactory,
    entriesPerManifest: Int,
    tombstoneThreshold: Double,
    maxManifests: Int,
    forceCompaction: Boolean = false,
    renormalizeThreshold: Int = 5)

/** What a state write did: the state directory, and whether it rewrote all entries. */
final case class AvroStateWriteResult(
    stateDir: String,
    manifest: StateManifest,
    compacted: Boolean,
    newManifests: Seq[String],
    alreadyExisted: Boolean,
    stateBase: Option[StateBase])

/**
 * Writes the Avro state of a snapshot as `state-v<version>/_manifest.avro`, in the forms that
 * IndexTables 0.5.4 writes (same schemas, shared `manifests/manifest-<hash>.avro` files).
 *
 * Incremental by default: the new state references the manifests of `base` (the state the
 * previous checkpoint wrote, which the snapshot was replayed from), adds one or more manifests
 * holding only the files added since,
 * and lists the files removed since as tombstones. It rewrites every live entry instead
 * (compaction) when there is no base, when tombstones would exceed the threshold, when the
 * manifest count would exceed the maximum, or when a tombstoned path comes back.
 *
 * Every file is written with put-if-absent, manifests before the state manifest, so an
 * interrupted write leaves only unreferenced files behind. Driver side; stateless.
 */
object AvroStateWriter {

  /** Partition values in order, column by column: the first that differs decides. */
  private val PartitionOrder: Ordering[Seq[String]] = new Ordering[Seq[String]] {
    override def compare(a: Seq[String], b: Seq[String]): Int =
      a.iterator.zip(b.iterator).map { case (x, y) => x.compareTo(y) }.find(_ != 0)
        .getOrElse(Integer.compare(a.length, b.length))
  }

  def write(
      store: LogStore,
      logPath: Path,
      snapshot: Snapshot,
      base: Option[StateBase],
      config: AvroStateConfig): AvroStateWriteResult = {
    val version = snapshot.version
    val stateDir = io.indextables.spark.transaction.LastCheckpoint.stateDirName(version)
    val stateFile = AvroStateReader.stateManifestPath(logPath, stateDir)
    if (store.exists(stateFile)) {
      // Another writer checkpointed this version already; its state is as good as ours.
      return AvroStateWriteResult(
        stateDir,
        AvroStateReader.readManifest(store, logPath, stateDir),
        compacted = false,
        Nil,
        alreadyExisted = true,
        stateBase = None)
    }
    val now = System.currentTimeMillis()
    val partitionColumns = snapshot.metadata.partitionColumns
    val remap = renormalization(snapshot, config.renormalizeThreshold)
    val liveEntries = if (remap.isEmpty) snapshot.entries
    else snapshot.entries.map { e =>
      e.copy(add = e.add.copy(docMappingRef = e.add.docMappingRef.map(r => remap.getOrElse(r, r))))
    }
    val live = liveEntries.map(_.add)
    val livePaths = live.iterator.map(_.path).toSet

    val plan = base.filter(_ => !config.forceCompaction && remap.isEmpty).flatMap { b =>
      val baseLive = b.entryPaths -- b.manifest.tombstones
      val added = liveEntries.filterNot(e => baseLive.contains(e.add.path))
      val removed = baseLive.filterNot(livePaths.contains)
      val tombstones = b.manifest.tombstones ++ removed.toSeq.sorted
      val totalEntries = b.manifest.manifests.map(_.numEntries).sum + added.size
      val perManifest = config.entriesPerManifest
      val newManifestCount = (added.size + perManifest - 1) / perManifest
      val readded = b.readded.nonEmpty || added.exists(e => b.entryPaths.contains(e.add.path))
      val tooManyTombstones =
        totalEntries > 0 && tombstones.size.toDouble / totalEntries > config.tombstoneThreshold
      val tooManyManifests = b.manifest.manifests.size + newManifestCount > config.maxManifests
      if (readded || tooManyTombstones || tooManyManifests) None
      else Some((b, added, tombstones))
    }

    val (manifests, tombstones, newManifests) = plan match {
      case Some((b, added, tomb)) =>
        val written = writeManifests(store, logPath, added, partitionColumns, config)
        (b.manifest.manifests ++ written, tomb, written.map(_.path))
      case None =>
        // Compaction lays entries out by partition, so that each manifest's bounds are narrow.
        val byPartition = if (partitionColumns.isEmpty) liveEntries
        else liveEntries.sortBy(e =>
          partitionColumns.map(c =>
            Option(e.add.partitionValues.getOrElse(c, null)).getOrElse("")))(PartitionOrder)
        val written = writeManifests(store, logPath, byPartition, partitionColumns, config)
        (written, Nil, written.map(_.path))
    }

    val inlineRegistry = live.flatMap { a =>
      if (a.docMappingRef.isDefined) None else a.docMappingJson.map(j => SchemaHash.compute(j) -> j)
    }.toMap
    val registry = inlineRegistry ++ snapshot.schemaRegistry.map { case (h, json) =>
      remap.getOrElse(h, h) -> json
    }
    val metadata = snapshot.metadata.copy(configuration = TableFeatures.intoState(
      snapshot.protocol,
      snapshot.metadata.configuration.filterNot(_._1.startsWith(SchemaHash.RegistryKeyPrefix))))
    val manifest = StateManifest(
      formatVersion = StateManifest.FormatVersion,
      stateVersion = version,
      createdAt = now,
      numFiles = live.size.toLong,
      totalBytes = snapshot.sizeInBytes,
      manifests = manifests,
      tombstones = tombstones,
      schemaRegistry = registry,
      protocolVersion = StateManifest.ProtocolVersion,
      metadata = Some(ActionSerde.toJson(metadata))
    )
    val written = store.putIfAbsent(
      stateFile,
      AvroStateCodec.encodeStateManifest(manifest, config.codec))
    val entryPaths = plan match {
      case Some((b, added, _)) => b.entryPaths ++ added.map(_.add.path)
      case None => livePaths
    }
    AvroStateWriteResult(
      stateDir,
      manifest,
      compacted = plan.isEmpty,
      newManifests,
      alreadyExisted = !written,
      stateBase = if (written) Some(StateBase(stateDir, manifest, entryPaths)) else None
    )
  }

  /** Old ref to canonical ref, for the refs whose hash is not canonical; empty below threshold. */
  private def renormalization(snapshot: Snapshot, threshold: Int): Map[String, String] = {
    val refs = snapshot.allFiles.flatMap(_.docMappingRef).distinct
    if (refs.size <= threshold) Map.empty
    else refs.flatMap { r =>
      snapshot.schemaRegistry.get(r).map(json => r -> SchemaHash.compute(json))
    }.filter { case (from, to) => from != to }.toMap
  }

  /**
   * Writes `files` as manifests of at most entriesPerManifest entries each. Every entry keeps the
   * version and time that added it to the table.
   */
  private def writeManifests(
      store: LogStore,
      logPath: Path,
      files: Seq[FileEntry],
      partitionColumns: Seq[String],
      config: AvroStateConfig): Seq[ManifestInfo] =
    files.grouped(config.entriesPerManifest).map { chunk =>
      val entries = chunk.map { e =>
        val a = e.add
        // Avro maps cannot hold nulls: a SQL NULL partition value is written as an absent key.
        // An inline (pre-V3) doc mapping moves to the registry; see inlineRegistry.
        val add = a.copy(
          partitionValues = a.partitionValues.filter(_._2 != null),
          docMappingRef = a.docMappingRef.orElse(a.docMappingJson.map(SchemaHash.compute)),
          docMappingJson = None
        )
        e.copy(add = add)
      }
      val bytes = AvroStateCodec.encodeFileEntries(entries, config.codec, partitionColumns)
      val path = putWithFreshName(store, logPath, bytes)
      ManifestInfo(
        path = path,
        numEntries = entries.size.toLong,
        minAddedAtVersion = entries.iterator.map(_.addedAtVersion).min,
        maxAddedAtVersion = entries.iterator.map(_.addedAtVersion).max,
        partitionBounds = bounds(chunk.map(_.add), partitionColumns)
      )
    }.toVector

  private def putWithFreshName(store: LogStore, logPath: Path, bytes: Array[Byte]): String = {
    val attempts = 10
    var attempt = 0
    while (attempt < attempts) {
      val hash = UUID.randomUUID().toString.replace("-", "").take(8)
      val rel = s"${AvroStateReader.SharedManifestDir}/manifest-$hash.avro"
      if (store.putIfAbsent(new Path(logPath, rel), bytes)) return rel
      attempt += 1
    }
    throw IndexTablesErrors.stateNameTaken(logPath, attempts)
  }

  /** Min and max of every partition column over `files` (nulls ignored), None if unpartitioned. */
  def bounds(files: Seq[AddAction], partitionColumns: Seq[String])
      : Option[Map[String, PartitionBounds]] =
    if (partitionColumns.isEmpty) None
    else Some(partitionColumns.map { c =>
      val values = files.flatMap(_.partitionValues.get(c)).filter(_ != null)
      c -> (if (values.isEmpty) PartitionBounds(None, None)
            else PartitionBounds(Some(values.min), Some(values.max)))
    }.toMap)
}

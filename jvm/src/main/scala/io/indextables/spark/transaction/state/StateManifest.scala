package io.indextables.spark.transaction.state

import io.indextables.spark.transaction.AddAction

/** Min and max value of one partition column across a manifest's entries (None when unknown). */
final case class PartitionBounds(min: Option[String], max: Option[String])

/**
 * One shared manifest that a state references. `path` is relative to the transaction log root
 * (`manifests/...` or `state-v.../...`) or, in the legacy form, to the state directory.
 */
final case class ManifestInfo(
    path: String,
    numEntries: Long,
    minAddedAtVersion: Long,
    maxAddedAtVersion: Long,
    partitionBounds: Option[Map[String, PartitionBounds]],
    tombstoneCount: Long = 0L,
    liveEntryCount: Long = -1L)

/**
 * The record of `state-v<version>/_manifest.avro`: the table state at `stateVersion` as a list of
 * manifests, minus `tombstones` (paths of entries removed since the manifests were written).
 * `metadata` is the JSON of the metaData action; tables written by 0.5.4 leave it null and keep
 * the metadata in their version files. Immutable.
 */
final case class StateManifest(
    formatVersion: Int,
    stateVersion: Long,
    createdAt: Long,
    numFiles: Long,
    totalBytes: Long,
    manifests: Seq[ManifestInfo],
    tombstones: Seq[String],
    schemaRegistry: Map[String, String],
    protocolVersion: Int,
    metadata: Option[String])

object StateManifest {
  val FormatVersion: Int = 1
  val ProtocolVersion: Int = 4
}

/** One record of a shared manifest: a split and the version that added it. */
final case class FileEntry(add: AddAction, addedAtVersion: Long, addedAtTimestamp: Long)

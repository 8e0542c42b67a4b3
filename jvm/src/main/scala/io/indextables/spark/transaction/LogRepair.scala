package io.indextables.spark.transaction

import org.apache.hadoop.fs.Path

import io.indextables.spark.storage.LogStore

/**
 * Writes a fresh log from a table's latest state (REPAIR INDEXFILES TRANSACTION LOG): version 0
 * holds the protocol and metadata, version 1 the given live splits, with their paths as the
 * source log holds them (relative to the table root). Driver side; stateless.
 */
object LogRepair {

  /**
   * Writes the log at `logDir`, which must hold no version file yet (put-if-absent: a
   * concurrent repair to the same place makes this one fail rather than mix two logs). Returns
   * the version of the last file written.
   */
  def write(
      store: LogStore,
      logDir: Path,
      snapshot: Snapshot,
      adds: Seq[AddAction],
      compressed: Boolean): Long = {
    def put(version: Long, actions: Seq[Action]): Unit =
      if (!store.putIfAbsent(
          VersionFiles.path(logDir, version),
          VersionFiles.encode(
            actions,
            compressed))) {
        throw new java.io.IOException(s"${VersionFiles.path(logDir, version)} already exists")
      }
    put(0, Seq(snapshot.protocol, snapshot.metadata))
    if (adds.isEmpty) 0L
    else {
      put(1, adds.map(_.copy(dataChange = true)))
      1L
    }
  }
}

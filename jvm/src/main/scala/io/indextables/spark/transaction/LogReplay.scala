package io.indextables.spark.transaction

import scala.collection.mutable

import org.apache.hadoop.fs.Path

/**
 * Folds version files, in version order, into a [[Snapshot]]: the last protocol and metadata
 * win, an add of a path replaces any earlier add of it (and clears its tombstone), a remove
 * turns a live path into a tombstone, and the last mergeskip of a path wins.
 * Replay can start from an earlier snapshot, so that a newer version costs only its new files.
 * Stateless; used on the driver.
 */
object LogReplay {

  /**
   * @param base     the snapshot to continue from, or None to start from an empty table
   * @param versions the version files after `base` (or from 0), dense and ascending
   */
  def replay(tablePath: Path, base: Option[Snapshot], versions: Seq[(Long, Seq[Action])])
      : Snapshot = {
    require(versions.nonEmpty || base.nonEmpty, "nothing to replay")
    var protocol = base.map(_.protocol)
    var metadata = base.map(_.metadata)
    val files = mutable.LinkedHashMap.empty[String, AddAction]
    val tombstones = mutable.LinkedHashMap.empty[String, RemoveAction]
    val skips = mutable.LinkedHashMap.empty[String, MergeSkipAction]
    val stateBase = base.flatMap(_.stateBase)
    val readded = mutable.Set.empty[String]
    base.foreach { s =>
      s.allFiles.foreach(a => files.put(a.path, a))
      s.tombstones.foreach(r => tombstones.put(r.path, r))
      s.mergeSkips.foreach(m => skips.put(m.path, m))
    }
    versions.foreach { case (_, actions) =>
      actions.foreach {
        case p: ProtocolAction => protocol = Some(p)
        case m: MetadataAction => metadata = Some(m)
        case a: AddAction =>
          if (stateBase.exists(_.entryPaths.contains(a.path))) readded += a.path
          files.put(a.path, a)
          tombstones.remove(a.path)
        case r: RemoveAction =>
          files.remove(r.path)
          tombstones.put(r.path, r)
        case s: MergeSkipAction => skips.put(s.path, s)
      }
    }
    val version = versions.lastOption.map(_._1).getOrElse(base.get.version)
    val p = protocol.getOrElse(
      throw TransactionLogErrors.missingProtocolOrMetadata(tablePath, version, "protocol"))
    if (p.minReaderVersion > TransactionLog.MaxReaderVersion) {
      throw TransactionLogErrors.unsupportedReaderVersion(tablePath, p.minReaderVersion)
    }
    val m = metadata.getOrElse(
      throw TransactionLogErrors.missingProtocolOrMetadata(tablePath, version, "metaData"))
    Snapshot(tablePath, version, p, m, files.values.toVector, tombstones.values.toVector,
      skips.values.toVector, stateBase.map(b => b.copy(readded = b.readded ++ readded)))
  }
}

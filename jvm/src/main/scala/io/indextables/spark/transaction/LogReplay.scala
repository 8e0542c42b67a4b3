package io.indextables.spark.transaction

import scala.collection.mutable

import org.apache.hadoop.fs.Path

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.transaction.state.FileEntry

/**
 * Folds version files, in version order, into a [[Snapshot]]: the last protocol and metadata
 * win, an add of a path replaces any earlier add of it (and clears its tombstone), a remove
 * turns a live path into a tombstone, and the last mergeskip of a path wins.
 * Replay can start from an earlier snapshot, so that a newer version costs only its new files.
 *
 * The protocol and metadata are replayed at once, and so are the checks on them; the files
 * when the snapshot's files are first used. Stateless; used on the driver.
 */
object LogReplay {

  /** Past this many unloaded snapshots in a row, replay loads the base's files first. */
  private val MaxPendingDepth = 64

  /**
   * @param base     the snapshot to continue from, or None to start from an empty table
   * @param versions the version files after `base` (or from 0), dense and ascending
   */
  def replay(tablePath: Path, base: Option[Snapshot], versions: Seq[(Long, Seq[Action])])
      : Snapshot = {
    if (versions.isEmpty && base.isEmpty)
      throw IndexTablesErrors.internalError(
        s"a replay of $tablePath from no snapshot and no versions")
    if (versions.isEmpty) return base.get
    var protocol = base.map(_.protocol)
    var metadata = base.map(_.metadata)
    versions.foreach { case (_, actions) =>
      actions.foreach {
        case p: ProtocolAction => protocol = Some(p)
        case m: MetadataAction => metadata = Some(m)
        case _ =>
      }
    }
    val version = versions.lastOption.map(_._1).getOrElse(base.get.version)
    val p = protocol.getOrElse(
      throw IndexTablesErrors.missingProtocolOrMetadata(tablePath, version, "protocol"))
    TableFeatures.checkReadable(tablePath, None, p)
    val m = metadata.getOrElse(
      throw IndexTablesErrors.missingProtocolOrMetadata(tablePath, version, "metaData"))
    // A long chain of unloaded snapshots would make the eventual load recurse deeply.
    val depth = base.filterNot(_.filesLoaded).map(_.pendingDepth + 1).getOrElse(0)
    if (depth > MaxPendingDepth) base.foreach(_.allFiles)
    val pendingDepth = base.filterNot(_.filesLoaded).map(_.pendingDepth + 1).getOrElse(0)
    new Snapshot(tablePath, version, p, m, new Replay(base, versions), pendingDepth)
  }

  /** The files of `base` with `versions` applied. */
  private final class Replay(base: Option[Snapshot], versions: Seq[(Long, Seq[Action])])
      extends Snapshot.FileLoader {

    def loadAll(): Snapshot.Files = {
      // The tail's final word on each path it touches: an entry, or None when removed.
      val touched = mutable.LinkedHashMap.empty[String, Option[FileEntry]]
      val tombstones = mutable.LinkedHashMap.empty[String, RemoveAction]
      val skips = mutable.LinkedHashMap.empty[String, MergeSkipAction]
      val stateBase = base.flatMap(_.stateBase)
      val readded = mutable.Set.empty[String]
      val removed = mutable.Set.empty[String]
      base.foreach { s =>
        s.tombstones.foreach(r => tombstones.put(r.path, r))
        s.mergeSkips.foreach(m => skips.put(m.path, m))
      }
      versions.foreach { case (v, actions) =>
        actions.foreach {
          case a: AddAction =>
            // After a remove, the path comes back at the end, as in a fresh insertion.
            if (touched.get(a.path).exists(_.isEmpty)) touched.remove(a.path)
            touched.put(a.path, Some(FileEntry(a, v, a.modificationTime)))
            tombstones.remove(a.path)
          case r: RemoveAction =>
            removed += r.path
            touched.remove(r.path)
            touched.put(r.path, None)
            tombstones.put(r.path, r)
          case s: MergeSkipAction => skips.put(s.path, s)
          case _ =>
        }
      }
      // One pass over the base keeps each path where it was first added; a path the tail
      // replaces keeps its place unless the tail removed it, and the tail's other paths follow.
      val files = Vector.newBuilder[FileEntry]
      val placed = mutable.Set.empty[String]
      base.foreach(_.entries.foreach { e =>
        if (touched.isEmpty || !touched.contains(e.add.path)) files += e
        else {
          if (touched(e.add.path).isDefined) readded += e.add.path
          if (!removed.contains(e.add.path)) {
            touched(e.add.path).foreach { latest => files += latest; placed += e.add.path }
          }
        }
      })
      // Entries of the state that the tail adds again: live at the base (above), removed since
      // the base's state, or tombstoned in it. A superset, which only costs a compaction.
      stateBase.foreach { b =>
        val gone = base.map(_.tombstones.iterator.map(_.path).toSet).getOrElse(Set.empty) ++
          b.manifest.tombstones
        touched.foreach { case (path, e) =>
          if (e.isDefined && gone.contains(path)) readded += path
        }
      }
      touched.foreach {
        case (path, Some(e)) if !placed.contains(path) => files += e
        case _ =>
      }
      Snapshot.Files(
        files.result(),
        tombstones.values.toVector,
        skips.values.toVector,
        stateBase.map(_.withReadded(readded)))
    }

    def loadMatching(keep: Snapshot.ManifestFilter, keepPartition: Snapshot.PartitionFilter)
        : Seq[AddAction] = {
      val files = mutable.LinkedHashMap.empty[String, AddAction]
      base.foreach(_.filesMatching(keep, keepPartition).foreach(a => files.put(a.path, a)))
      versions.foreach { case (_, actions) =>
        actions.foreach {
          case a: AddAction => files.put(a.path, a)
          case r: RemoveAction => files.remove(r.path)
          case _ =>
        }
      }
      files.values.toVector
    }
  }
}

package io.indextables.spark.transaction

/**
 * One entry of a version file in the transaction log (see `shared/seeds/protocol.md`).
 *
 * Actions are immutable values; their JSON form lives in [[ActionSerde]] and their combination
 * into table state in [[LogReplay]]. Optional protocol fields are `Option`s; the one exception is
 * a partition value, which may be `null` inside a partition-value map (see [[AddAction]]).
 */
sealed trait Action

/**
 * The reader and writer versions a client must support to use the table.
 * Feature sets are only present from protocol version 3 on.
 */
final case class ProtocolAction(
    minReaderVersion: Int,
    minWriterVersion: Int,
    readerFeatures: Option[Set[String]] = None,
    writerFeatures: Option[Set[String]] = None)
    extends Action

object ProtocolAction {

  /** The protocol this code writes for a new table: the newest versions it supports. */
  def current: ProtocolAction =
    ProtocolAction(TransactionLog.MaxReaderVersion, TransactionLog.MaxWriterVersion)
}

/** The data file format of a table: always provider `indextables` for tables we write. */
final case class FileFormat(
    provider: String = "indextables",
    options: Map[String, String] = Map.empty)

/**
 * Table metadata: identity, Spark schema (as JSON), partitioning and configuration.
 * `configuration` also holds the schema registry, as `docMappingSchema.<hash>` entries.
 */
final case class MetadataAction(
    id: String,
    name: Option[String] = None,
    description: Option[String] = None,
    format: FileFormat = FileFormat(),
    schemaString: String,
    partitionColumns: Seq[String],
    configuration: Map[String, String],
    createdTime: Option[Long])
    extends Action

/**
 * A split file that became part of the table.
 *
 * `path` is relative to the table root. A split of a companion table (see
 * [[TableFeatures.CompanionLayout]]) holds only the index of its rows, which live in the Parquet
 * files `companionSourceFiles` names (relative to the table root, as upstream records them);
 * `companionFastFieldMode` is the mode its fast fields were built with, and
 * `companionDeltaVersion` the source version it reflects, for an index over another table;
 * `companionSourceFileSizes` (ours, part of the `parquetCompanion` feature) the byte size of
 * each of those files when it was indexed, in the same order, so that a file changed under the
 * table is refused rather than read; `companionDocsInRowOrder` (ours too) whether doc d of the
 * split is row d of those files read one after the other in that order, so that a deletion
 * vector's docs are known rows of them; `companionSourceDeletionVectors` (ours too) the id of the
 * deletion vector the source table had on each of those files when the split's own vector was
 * made from them, in the same order ("" for none), so that a sync sees which changed.
 * `partitionValues` maps every partition column to its
 * value; a value is `null` (a JSON null) when the row's partition value is SQL NULL, and such
 * entries are kept, not dropped, so that writing the action back reproduces the null.
 */
final case class AddAction(
    path: String,
    partitionValues: Map[String, String],
    size: Long,
    modificationTime: Long,
    dataChange: Boolean,
    stats: Option[String] = None,
    minValues: Option[Map[String, String]] = None,
    maxValues: Option[Map[String, String]] = None,
    numRecords: Option[Long] = None,
    hasFooterOffsets: Boolean = false,
    footerStartOffset: Option[Long] = None,
    footerEndOffset: Option[Long] = None,
    splitTags: Option[Set[String]] = None,
    numMergeOps: Option[Int] = None,
    docMappingRef: Option[String] = None,
    docMappingJson: Option[String] = None,
    uncompressedSizeBytes: Option[Long] = None,
    companionSourceFiles: Option[Seq[String]] = None,
    companionDeltaVersion: Option[Long] = None,
    companionFastFieldMode: Option[String] = None,
    companionSourceFileSizes: Option[Seq[Long]] = None,
    deletionVector: Option[DeletionVectorDescriptor] = None,
    companionDocsInRowOrder: Option[Boolean] = None,
    companionSourceDeletionVectors: Option[Seq[String]] = None)
    extends Action {

  /**
   * The files this entry needs: the split itself, its Parquet companions, and the file of its
   * deletion vector.
   */
  def files: Seq[String] =
    (path +: companionSourceFiles.getOrElse(Nil)) ++ deletionVector.flatMap(_.file)

  /** The rows a reader serves: the split's documents less the deleted ones, when known. */
  def liveRecords: Option[Long] = numRecords.map(_ - deletionVector.fold(0L)(_.cardinality))

  /**
   * What a reader of this entry sees: its split and its deletion vector. Two entries of one
   * path with different keys serve different rows, so a commit that read one must not act on
   * the other as if it were the same (see `OptimisticTransaction`).
   */
  def fileKey: AddAction.FileKey = AddAction.FileKey(path, deletionVector.map(_.uniqueId))

  /** The remove of this entry at `timestamp`, naming what PURGE and replay need of it. */
  def removed(timestamp: Long, dataChange: Boolean): RemoveAction =
    RemoveAction(
      path,
      Some(timestamp),
      dataChange,
      Some(partitionValues),
      Some(size),
      deletionVector)

  /**
   * The byte size each of `companionSourceFiles` had when it was indexed, by path: empty for a
   * split written before sizes were recorded (or by another writer that records none).
   */
  def companionSizes: Map[String, Long] =
    (companionSourceFiles, companionSourceFileSizes) match {
      case (Some(files), Some(sizes)) if files.size == sizes.size => files.zip(sizes).toMap
      case _ => Map.empty
    }

  /**
   * The source's deletion vector id on each of `companionSourceFiles` that the split's own
   * vector reflects, in their order; every one "" (none) for a split that records none.
   */
  def companionSourceVectors: Seq[String] = {
    val files = companionSourceFiles.getOrElse(Nil)
    companionSourceDeletionVectors.filter(_.size == files.size).getOrElse(files.map(_ => ""))
  }
}

object AddAction {

  /** A live entry's identity: its path and the id of its deletion vector, if any. */
  final case class FileKey(path: String, deletionVector: Option[String])
}

/**
 * The rows of one split that a DELETE, UPDATE or MERGE removed (the `deletionVectors` feature,
 * see [[TableFeatures.DeletionVectors]]), named by an add action as Delta's deletion vectors
 * are: a 32-bit Roaring bitmap of the split's deleted doc ids, stored at `offset` of a file
 * beside the split ([[DeletionVectorFile]]).
 *
 * @param storageType    `r`: `pathOrInlineDv` is a file path relative to the table root (the
 *                       one kind written); other kinds are refused by name
 * @param pathOrInlineDv the vector's file
 * @param offset         where the vector's size field starts in the file
 * @param sizeInBytes    bytes of the serialized vector (magic and bitmap)
 * @param cardinality    how many docs it deletes
 */
final case class DeletionVectorDescriptor(
    storageType: String,
    pathOrInlineDv: String,
    offset: Option[Int],
    sizeInBytes: Int,
    cardinality: Long) {

  /** Identifies the vector within the table: two descriptors with one id hold the same rows. */
  def uniqueId: String = storageType + pathOrInlineDv + offset.fold("")("@" + _)

  /** The vector's file relative to the table root, when it lives in a file. */
  def file: Option[String] =
    if (storageType == DeletionVectorDescriptor.RelativePath) Some(pathOrInlineDv) else None
}

object DeletionVectorDescriptor {

  /** The storage type of a vector in its own file, named relative to the table root. */
  val RelativePath = "r"
}

/**
 * A split file that was logically deleted. Partition values, when present, follow the same
 * null convention as [[AddAction.partitionValues]]. `deletionVector` is the vector the removed
 * entry had, so that PURGE learns when that vector's file left the table: a new vector for a
 * live split is committed as a remove of its entry and an add of the same path, in that order.
 */
final case class RemoveAction(
    path: String,
    deletionTimestamp: Option[Long],
    dataChange: Boolean,
    partitionValues: Option[Map[String, String]] = None,
    size: Option[Long] = None,
    deletionVector: Option[DeletionVectorDescriptor] = None)
    extends Action

/**
 * A split that an operation (usually merge) should skip until `retryAfter`.
 * Its JSON key is `mergeskip`.
 */
final case class MergeSkipAction(
    path: String,
    skipTimestamp: Long,
    reason: String,
    operation: String,
    retryAfter: Option[Long],
    skipCount: Int)
    extends Action

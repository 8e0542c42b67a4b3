package io.indextables.spark.transaction

import org.apache.hadoop.fs.Path

import io.indextables.spark.IndexTablesErrors

/**
 * The protocol's feature flags (protocol version 3 on): a table that needs a reader or writer
 * to know something beyond its version names it in `readerFeatures` / `writerFeatures`, and a
 * client that does not know every name refuses the table, naming what it lacks, rather than
 * misread or corrupt it.
 */
object TableFeatures {

  /** The protocol's own features (seeds' `protocol.md`). */
  val AvroState = "avroState"
  val MultiPartCheckpoint = "multiPartCheckpoint"
  val SchemaDeduplication = "schemaDeduplication"

  /**
   * The companion layout: each split indexes the rows of Parquet files its add action names
   * (`companionSourceFiles`), and stores none of them itself. A reader that does not know it
   * would find no document in the splits.
   */
  val CompanionLayout = "parquetCompanion"

  /**
   * Rows deleted by DELETE, UPDATE or MERGE are named by deletion vectors of their splits (see
   * [[DeletionVectorDescriptor]]): a reader that does not know them would serve deleted rows.
   * Added to a table by the first commit that writes a vector, never removed.
   */
  val DeletionVectors = "deletionVectors"

  val SupportedReaderFeatures: Set[String] =
    Set(AvroState, MultiPartCheckpoint, SchemaDeduplication, CompanionLayout, DeletionVectors)
  val SupportedWriterFeatures: Set[String] = SupportedReaderFeatures

  /**
   * Where an Avro state keeps the protocol's features: its manifest (whose schema is upstream's,
   * byte for byte) holds only a protocol version, so they ride in the configuration of the
   * metadata it stores, under these keys, and come out of it again when the state is read.
   */
  val StateReaderFeaturesKey = "indextables.protocol.readerFeatures"
  val StateWriterFeaturesKey = "indextables.protocol.writerFeatures"

  /** `configuration` with the features of `p` added (what an Avro state stores). */
  def intoState(p: ProtocolAction, configuration: Map[String, String]): Map[String, String] =
    configuration ++
      p.readerFeatures.filter(_.nonEmpty).map(f =>
        StateReaderFeaturesKey -> f.toSeq.sorted.mkString(",")) ++
      p.writerFeatures.filter(_.nonEmpty).map(f =>
        StateWriterFeaturesKey -> f.toSeq.sorted.mkString(","))

  /** The protocol an Avro state records (`p`, its features from `configuration`), and the rest. */
  def fromState(p: ProtocolAction, configuration: Map[String, String])
      : (ProtocolAction, Map[String, String]) = {
    def set(key: String) =
      configuration.get(key).map(_.split(",").map(_.trim).filter(_.nonEmpty).toSet)
    val restored = p.copy(
      readerFeatures = p.readerFeatures.orElse(set(StateReaderFeaturesKey)),
      writerFeatures = p.writerFeatures.orElse(set(StateWriterFeaturesKey)))
    (restored, configuration - StateReaderFeaturesKey - StateWriterFeaturesKey)
  }

  /** The protocol of a new table that uses `features` (none: the plain current protocol). */
  def protocolWith(features: Set[String]): ProtocolAction =
    if (features.isEmpty) ProtocolAction.current
    else ProtocolAction.current.copy(
      readerFeatures = Some(features),
      writerFeatures = Some(features))

  /**
   * The protocol of a table read from an Avro state, which records the protocol's version but
   * no protocol action: the features its metadata shows it uses (a companion table's carries
   * upstream's `indextables.companion.enabled=true`). Without them a companion table read from
   * its checkpoint would be taken for one whose splits hold the rows.
   */
  def protocolOfState(version: Int, metadata: MetadataAction): ProtocolAction = {
    val features =
      if (metadata.configuration.get(TableLayout.CompanionEnabledKey).contains("true"))
        TableLayout.Companion.features
      else Set.empty[String]
    if (features.isEmpty) ProtocolAction(version, version)
    else ProtocolAction(version, version, Some(features), Some(features))
  }

  /** Fails unless this code may read a table of protocol `p` (`file`: where it was found). */
  def checkReadable(tablePath: Path, file: Option[Path], p: ProtocolAction): Unit = {
    checkReaderVersion(tablePath, file, p.minReaderVersion)
    val unknown = p.readerFeatures.getOrElse(Set.empty) -- SupportedReaderFeatures
    if (unknown.nonEmpty)
      throw IndexTablesErrors.unsupportedFeatures(tablePath, "reader", unknown.toSeq.sorted)
  }

  /**
   * Fails unless this code reads protocol version `version` (`file`: where it was found): the one
   * comparison with [[TransactionLog.MaxReaderVersion]], for a protocol action and for an Avro
   * state's manifest, which holds only the version.
   */
  def checkReaderVersion(tablePath: Path, file: Option[Path], version: Int): Unit =
    if (version > TransactionLog.MaxReaderVersion) {
      throw IndexTablesErrors.unsupportedReaderVersion(
        tablePath,
        file,
        version,
        TransactionLog.MaxReaderVersion)
    }

  /** Fails unless this code may write to a table of protocol `p`. */
  def checkWritable(tablePath: Path, p: ProtocolAction): Unit = {
    if (p.minWriterVersion > TransactionLog.MaxWriterVersion) {
      throw IndexTablesErrors.unsupportedWriterVersion(
        tablePath,
        p.minWriterVersion,
        TransactionLog.MaxWriterVersion)
    }
    val unknown = p.writerFeatures.getOrElse(Set.empty) -- SupportedWriterFeatures
    if (unknown.nonEmpty)
      throw IndexTablesErrors.unsupportedFeatures(tablePath, "writer", unknown.toSeq.sorted)
  }

  /** Whether a table of protocol `p` may hold deletion vectors. */
  def hasDeletionVectors(p: ProtocolAction): Boolean =
    p.readerFeatures.exists(_.contains(DeletionVectors))

  /** `p` with reader and writer feature `feature` (and the feature sets' versions). */
  def withFeature(p: ProtocolAction, feature: String): ProtocolAction =
    if (p.readerFeatures.exists(_.contains(feature)) && p.writerFeatures.exists(
        _.contains(feature)))
      p
    else p.copy(
      minReaderVersion = math.max(p.minReaderVersion, TransactionLog.MaxReaderVersion),
      minWriterVersion = math.max(p.minWriterVersion, TransactionLog.MaxWriterVersion),
      readerFeatures = Some(p.readerFeatures.getOrElse(Set.empty) + feature),
      writerFeatures = Some(p.writerFeatures.getOrElse(Set.empty) + feature)
    )

  /** Whether a table of protocol `p` is of the companion layout. */
  def isCompanion(p: ProtocolAction): Boolean =
    p.readerFeatures.exists(_.contains(CompanionLayout))
}

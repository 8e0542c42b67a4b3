package io.indextables.spark.transaction.state

import java.io.{ByteArrayInputStream, ByteArrayOutputStream}
import java.util.Locale

import scala.collection.JavaConverters._

import org.apache.avro.Schema
import org.apache.avro.file.{CodecFactory, DataFileStream, DataFileWriter}
import org.apache.avro.generic.{GenericData, GenericDatumReader, GenericDatumWriter, GenericRecord}

import io.indextables.spark.transaction.AddAction

/**
 * Bytes of the Avro object container files of the state format: `_manifest.avro` (one
 * StateManifest record) and `manifests/manifest-<hash>.avro` (FileEntry records).
 *
 * Writing uses the schemas that IndexTables 0.5.4 embeds in its files (resources
 * `StateManifest.avsc` and `FileEntry.avsc`, copied byte for byte from the interop fixtures).
 * Reading uses whatever writer schema the file embeds and looks fields up by name, so fields
 * added by other writers are ignored and missing optional fields read as None.
 * Stateless and thread-safe.
 */
object AvroStateCodec {

  private def loadSchema(name: String): Schema = {
    val in = getClass.getResourceAsStream(name)
    require(in != null, s"missing resource $name")
    try new Schema.Parser().parse(in)
    finally in.close()
  }

  lazy val StateManifestSchema: Schema = loadSchema("StateManifest.avsc")
  lazy val FileEntrySchema: Schema = loadSchema("FileEntry.avsc")

  private lazy val ManifestInfoSchema: Schema =
    StateManifestSchema.getField("manifests").schema().getElementType
  private lazy val PartitionBoundsSchema: Schema =
    ManifestInfoSchema.getField("partitionBounds").schema().getTypes.asScala
      .find(_.getType == Schema.Type.MAP).get.getValueType

  /** The Avro codec for `spark.indextables.state.compression` (zstd, snappy or none). */
  def codec(name: String, level: Int): CodecFactory = name.trim.toLowerCase(Locale.ROOT) match {
    case "zstd" | "zstandard" => CodecFactory.zstandardCodec(level)
    case "snappy" => CodecFactory.snappyCodec()
    case "none" | "uncompressed" | "null" => CodecFactory.nullCodec()
    case other =>
      throw new IllegalArgumentException(
        s"Unknown state compression '$other' (expected zstd, snappy or none)")
  }

  // ---- writing ------------------------------------------------------------------------------

  def encodeStateManifest(m: StateManifest, codec: CodecFactory): Array[Byte] =
    write(StateManifestSchema, codec, Iterator.single(stateRecord(m)))

  def encodeFileEntries(entries: Seq[FileEntry], codec: CodecFactory): Array[Byte] =
    write(FileEntrySchema, codec, entries.iterator.map(entryRecord))

  private def write(schema: Schema, codec: CodecFactory, records: Iterator[GenericRecord])
      : Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val writer = new DataFileWriter[GenericRecord](new GenericDatumWriter[GenericRecord](schema))
    try {
      writer.setCodec(codec)
      writer.create(schema, out)
      records.foreach(writer.append)
    } finally writer.close()
    out.toByteArray
  }

  private def stateRecord(m: StateManifest): GenericRecord = {
    val r = new GenericData.Record(StateManifestSchema)
    r.put("formatVersion", m.formatVersion)
    r.put("stateVersion", m.stateVersion)
    r.put("createdAt", m.createdAt)
    r.put("numFiles", m.numFiles)
    r.put("totalBytes", m.totalBytes)
    r.put("manifests", m.manifests.map(manifestInfoRecord).asJava)
    r.put("tombstones", m.tombstones.asJava)
    r.put("schemaRegistry", m.schemaRegistry.asJava)
    r.put("protocolVersion", m.protocolVersion)
    r.put("metadata", m.metadata.orNull)
    r
  }

  private def manifestInfoRecord(i: ManifestInfo): GenericRecord = {
    val r = new GenericData.Record(ManifestInfoSchema)
    r.put("path", i.path)
    r.put("numEntries", i.numEntries)
    r.put("minAddedAtVersion", i.minAddedAtVersion)
    r.put("maxAddedAtVersion", i.maxAddedAtVersion)
    r.put("partitionBounds", i.partitionBounds.map { bounds =>
      bounds.map { case (col, b) =>
        val br = new GenericData.Record(PartitionBoundsSchema)
        br.put("min", b.min.orNull)
        br.put("max", b.max.orNull)
        col -> br
      }.asJava
    }.orNull)
    r.put("tombstoneCount", i.tombstoneCount)
    r.put("liveEntryCount", i.liveEntryCount)
    r
  }

  private def entryRecord(e: FileEntry): GenericRecord = {
    val a = e.add
    val r = new GenericData.Record(FileEntrySchema)
    r.put("path", a.path)
    r.put("partitionValues", a.partitionValues.asJava)
    r.put("size", a.size)
    r.put("modificationTime", a.modificationTime)
    r.put("dataChange", a.dataChange)
    r.put("stats", a.stats.orNull)
    r.put("minValues", a.minValues.map(_.asJava).orNull)
    r.put("maxValues", a.maxValues.map(_.asJava).orNull)
    r.put("numRecords", a.numRecords.map(Long.box).orNull)
    r.put("footerStartOffset", a.footerStartOffset.map(Long.box).orNull)
    r.put("footerEndOffset", a.footerEndOffset.map(Long.box).orNull)
    r.put("hasFooterOffsets", a.hasFooterOffsets)
    r.put("splitTags", a.splitTags.map(_.toSeq.sorted.asJava).orNull)
    r.put("numMergeOps", a.numMergeOps.map(Int.box).orNull)
    r.put("docMappingRef", a.docMappingRef.orNull)
    r.put("uncompressedSizeBytes", a.uncompressedSizeBytes.map(Long.box).orNull)
    r.put("addedAtVersion", e.addedAtVersion)
    r.put("addedAtTimestamp", e.addedAtTimestamp)
    r
  }

  // ---- reading ------------------------------------------------------------------------------

  /** Decodes `_manifest.avro`; throws IllegalArgumentException when it holds no record. */
  def decodeStateManifest(bytes: Array[Byte]): StateManifest = {
    val records = read(bytes)
    if (records.isEmpty) throw new IllegalArgumentException("the state manifest holds no record")
    val r = records.head
    StateManifest(
      formatVersion = int(r, "formatVersion").getOrElse(StateManifest.FormatVersion),
      stateVersion = required(long(r, "stateVersion"), "stateVersion"),
      createdAt = long(r, "createdAt").getOrElse(0L),
      numFiles = long(r, "numFiles").getOrElse(-1L),
      totalBytes = long(r, "totalBytes").getOrElse(-1L),
      manifests = list(r, "manifests").map {
        case m: GenericRecord => decodeManifestInfo(m)
        case other => throw new IllegalArgumentException(s"unexpected manifest item $other")
      },
      tombstones = list(r, "tombstones").map(_.toString),
      schemaRegistry = stringMap(r, "schemaRegistry").getOrElse(Map.empty),
      protocolVersion = int(r, "protocolVersion").getOrElse(StateManifest.ProtocolVersion),
      metadata = string(r, "metadata"))
  }

  private def decodeManifestInfo(r: GenericRecord): ManifestInfo =
    ManifestInfo(
      path = required(string(r, "path"), "manifests.path"),
      numEntries = long(r, "numEntries").getOrElse(-1L),
      minAddedAtVersion = long(r, "minAddedAtVersion").getOrElse(0L),
      maxAddedAtVersion = long(r, "maxAddedAtVersion").getOrElse(0L),
      partitionBounds = field(r, "partitionBounds").map { case m: java.util.Map[_, _] =>
        m.asScala.map { case (k, v) =>
          val b = v.asInstanceOf[GenericRecord]
          k.toString -> PartitionBounds(string(b, "min"), string(b, "max"))
        }.toMap
      },
      tombstoneCount = long(r, "tombstoneCount").getOrElse(0L),
      liveEntryCount = long(r, "liveEntryCount").getOrElse(-1L))

  /** Decodes a shared manifest into its entries, in file order. */
  def decodeFileEntries(bytes: Array[Byte]): Seq[FileEntry] = decodeFileEntries(bytes, null)

  /**
   * Decodes the entries of a shared manifest whose partition values (an Avro map: a NULL value
   * is an absent key) `keepPartition` accepts; all of them when it is null.
   */
  def decodeFileEntries(bytes: Array[Byte], keepPartition: Map[String, String] => Boolean)
      : Seq[FileEntry] = {
    val stream = new DataFileStream[FileEntry](new ByteArrayInputStream(bytes),
      new FileEntryDatumReader(keepPartition))
    try {
      val out = Vector.newBuilder[FileEntry]
      while (stream.hasNext) {
        val e = stream.next()
        if (e != null) out += e
      }
      out.result()
    } finally stream.close()
  }

  private def read(bytes: Array[Byte]): Vector[GenericRecord] = {
    val stream = new DataFileStream[GenericRecord](
      new ByteArrayInputStream(bytes), new GenericDatumReader[GenericRecord]())
    try {
      val out = Vector.newBuilder[GenericRecord]
      while (stream.hasNext) out += stream.next()
      out.result()
    } finally stream.close()
  }

  private def field(r: GenericRecord, name: String): Option[AnyRef] =
    if (r.getSchema.getField(name) == null) None else Option(r.get(name))

  private def required[T](v: Option[T], name: String): T =
    v.getOrElse(throw new IllegalArgumentException(s"required field '$name' is missing"))

  private def string(r: GenericRecord, name: String): Option[String] =
    field(r, name).map(_.toString)
  private def long(r: GenericRecord, name: String): Option[Long] =
    field(r, name).map(_.asInstanceOf[Number].longValue())
  private def int(r: GenericRecord, name: String): Option[Int] =
    field(r, name).map(_.asInstanceOf[Number].intValue())
  private def bool(r: GenericRecord, name: String): Option[Boolean] =
    field(r, name).map(_.asInstanceOf[java.lang.Boolean].booleanValue())
  private def list(r: GenericRecord, name: String): Seq[AnyRef] =
    field(r, name).map(_.asInstanceOf[java.util.Collection[AnyRef]].asScala.toVector)
      .getOrElse(Vector.empty)

  private def stringMap(r: GenericRecord, name: String): Option[Map[String, String]] =
    field(r, name).map(_.asInstanceOf[java.util.Map[AnyRef, AnyRef]].asScala.map {
      case (k, v) => k.toString -> (if (v == null) null else v.toString)
    }.toMap)

  /** A partition-value map, keeping null values (SQL NULL partition values). */
  private def nullableStringMap(r: GenericRecord, name: String): Option[Map[String, String]] =
    stringMap(r, name)
}

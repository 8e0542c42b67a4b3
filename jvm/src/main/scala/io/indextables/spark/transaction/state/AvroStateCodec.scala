package io.indextables.spark.transaction.state

import java.io.{ByteArrayInputStream, ByteArrayOutputStream}
import java.util.Locale

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import com.fasterxml.jackson.databind.ObjectMapper
import com.fasterxml.jackson.databind.node.ArrayNode
import org.apache.avro.Schema
import org.apache.avro.file.{CodecFactory, DataFileStream, DataFileWriter}
import org.apache.avro.generic.{GenericData, GenericDatumReader, GenericDatumWriter, GenericRecord}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.transaction.AddAction

/**
 * Bytes of the Avro object container files of the state format: `_manifest.avro` (one
 * StateManifest record) and `manifests/manifest-<hash>.avro` (FileEntry records).
 *
 * Writing uses the schemas that IndexTables 0.5.4 embeds in its files (resources
 * `StateManifest.avsc` and `FileEntry.avsc`, copied byte for byte from the interop fixtures).
 * A manifest holding entries that use our extensions (companion entries that record their
 * Parquet files' sizes, entries with a deletion vector) is written with 0.5.4's FileEntry and
 * the optional fields of those extensions, which readers resolving to 0.5.4's schema skip;
 * every other manifest is written with 0.5.4's schema.
 * Reading uses whatever writer schema the file embeds and looks fields up by name, so fields
 * added by other writers are ignored and missing optional fields read as None.
 * Stateless and thread-safe.
 */
object AvroStateCodec {

  private def loadSchema(name: String): Schema = {
    val in = getClass.getResourceAsStream(name)
    if (in == null)
      throw IndexTablesErrors.internalError(s"the Avro schema $name is not in the JAR")
    try new Schema.Parser().parse(in)
    finally in.close()
  }

  lazy val StateManifestSchema: Schema = loadSchema("StateManifest.avsc")
  lazy val FileEntrySchema: Schema = loadSchema("FileEntry.avsc")

  /** An optional field of ours that 0.5.4's FileEntry lacks; readers of its schema skip it. */
  private def extraField(name: String, id: Int, doc: String, tpe: Schema): Schema.Field = {
    val f = new Schema.Field(
      name,
      Schema.createUnion(Schema.create(Schema.Type.NULL), tpe),
      doc,
      Schema.Field.NULL_DEFAULT_VALUE)
    f.addProp("field-id", Int.box(id))
    f
  }

  /**
   * `companionSourceFileSizes` (the byte size of each of `companionSourceFiles` when indexed)
   * `companionDocsInRowOrder` and `companionSourceDeletionVectors`, written together: the
   * `parquetCompanion` feature's fields.
   */
  private lazy val CompanionSizesFields: Seq[Schema.Field] = Seq(
    extraField(
      "companionSourceFileSizes",
      153,
      "Byte size of each companionSourceFiles entry when it was indexed",
      Schema.createArray(Schema.create(Schema.Type.LONG))
    ),
    extraField(
      "companionDocsInRowOrder",
      159,
      "Whether doc d of the split is row d of its companionSourceFiles read in order",
      Schema.create(Schema.Type.BOOLEAN)
    ),
    extraField(
      "companionSourceDeletionVectors",
      160,
      "The source's deletion vector id on each companionSourceFiles entry, empty for none",
      Schema.createArray(Schema.create(Schema.Type.STRING))
    )
  )

  /**
   * The entry's deletion vector (the `deletionVectors` feature), as flat fields: the state's
   * readers keep no nested record.
   */
  private lazy val DeletionVectorFields: Seq[Schema.Field] = {
    def f(name: String, id: Int, doc: String, t: Schema.Type) =
      extraField(name, id, doc, Schema.create(t))
    Seq(
      f("deletionVectorStorageType", 154, "Deletion vector storage type", Schema.Type.STRING),
      f("deletionVectorPathOrInlineDv", 155, "Deletion vector file", Schema.Type.STRING),
      f("deletionVectorOffset", 156, "Deletion vector offset in its file", Schema.Type.INT),
      f("deletionVectorSizeInBytes", 157, "Deletion vector size", Schema.Type.INT),
      f("deletionVectorCardinality", 158, "Deleted docs", Schema.Type.LONG)
    )
  }

  /** [[FileEntrySchema]] with `extra` fields after 0.5.4's. */
  private def extended(extra: Seq[Schema.Field]): Schema = {
    val copied = FileEntrySchema.getFields.asScala.map(f => new Schema.Field(f, f.schema()))
    val added = extra.map(f => new Schema.Field(f, f.schema()))
    Schema.createRecord(
      FileEntrySchema.getName,
      FileEntrySchema.getDoc,
      FileEntrySchema.getNamespace,
      false,
      (copied ++ added).asJava)
  }

  /** [[FileEntrySchema]] and the fields of the extensions the entries use, by combination. */
  private lazy val EntrySchemas: Map[(Boolean, Boolean), Schema] = Map(
    (false, false) -> FileEntrySchema,
    (true, false) -> extended(CompanionSizesFields),
    (false, true) -> extended(DeletionVectorFields),
    (true, true) -> extended(CompanionSizesFields ++ DeletionVectorFields)
  )

  /**
   * The schema a manifest of `entries` is written with: 0.5.4's, byte for byte, unless an entry
   * uses one of our extensions.
   */
  private def entrySchema(entries: Seq[FileEntry]): Schema =
    EntrySchemas((
      entries.exists(a =>
        a.add.companionSourceFileSizes.isDefined ||
          a.add.companionDocsInRowOrder.isDefined ||
          a.add.companionSourceDeletionVectors.isDefined),
      entries.exists(_.add.deletionVector.isDefined)))

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
      throw IndexTablesErrors.invalidOption(
        "spark.indextables.state.compression",
        other,
        "zstd, snappy or none")
  }

  // ---- writing ------------------------------------------------------------------------------

  def encodeStateManifest(m: StateManifest, codec: CodecFactory): Array[Byte] =
    write(StateManifestSchema, codec, Iterator.single(stateRecord(m)))

  /**
   * A shared manifest of `entries`. For a partitioned table the file also carries a block index
   * (see [[BlockBoundsKey]]): blocks end at partition changes once they hold a few KB, and the
   * header lists each block's partition bounds, so that a read of some partitions decompresses
   * only their blocks. Other readers ignore the key; the file is a plain Avro container.
   */
  def encodeFileEntries(
      entries: Seq[FileEntry],
      codec: CodecFactory,
      partitionColumns: Seq[String] = Nil): Array[Byte] =
    if (partitionColumns.isEmpty || entries.isEmpty) {
      val schema = entrySchema(entries)
      write(schema, codec, entries.iterator.map(entryRecord(schema, _)))
    } else {
      val blocks = planBlocks(entries)
      val index = blockIndexJson(blocks.map { case (from, until) =>
        AvroStateWriter.bounds(entries.slice(from, until).map(_.add), partitionColumns).get ->
          (until - from).toLong
      })
      val schema = entrySchema(entries)
      write(
        schema,
        codec,
        entries.iterator.map(entryRecord(schema, _)),
        Map(BlockBoundsKey -> index),
        blocks.map(_._2).toSet)
    }

  private def write(
      schema: Schema,
      codec: CodecFactory,
      records: Iterator[GenericRecord],
      meta: Map[String, String] = Map.empty,
      blockEnds: Set[Int] = Set.empty): Array[Byte] = {
    val out = new ByteArrayOutputStream()
    val writer = new DataFileWriter[GenericRecord](new GenericDatumWriter[GenericRecord](schema))
    try {
      writer.setCodec(codec)
      meta.foreach { case (k, v) => writer.setMeta(k, v) }
      // With planned blocks, Avro must never end one on its own: blocks are ended (sync) where
      // planned, and a planned block's estimate bounds its real size far below this interval.
      if (blockEnds.nonEmpty) writer.setSyncInterval(MaxPlannedBlockBytes)
      writer.create(schema, out)
      var n = 0
      records.foreach { r =>
        writer.append(r)
        n += 1
        if (blockEnds(n)) writer.sync()
      }
    } finally writer.close()
    out.toByteArray
  }

  /**
   * Header key of a manifest's block index: JSON `{"blocks":[{"bounds":{col:{"min":..,"max":..}},
   * "records":[n, ...]}, ...]}`, one element per run of consecutive blocks with equal partition
   * bounds, listing each block's record count. Absent min and max mean only NULL values.
   */
  val BlockBoundsKey: String = "indextables.blockPartitionBounds"

  private val TargetBlockBytes = 64 * 1024
  private val MinAlignedBlockBytes = 8 * 1024
  private val MaxPlannedBlockBytes = 1024 * 1024

  /** [from, until) entry ranges of the blocks of a manifest of `entries`. */
  private def planBlocks(entries: Seq[FileEntry]): Seq[(Int, Int)] = {
    val arr = entries.toIndexedSeq
    // About each entry's encoded size, and more than it.
    val sizes = arr.map(e => encodedSize(e.add, perChar = 1, perString = 2, fixed = 48))
    val limits = arr.map(e => encodedSize(e.add, perChar = 3, perString = 10, fixed = 128))
    val blocks = Vector.newBuilder[(Int, Int)]
    var from = 0
    var bytes = 0L
    var bound = 0L
    var i = 0
    while (i < arr.length) {
      bytes += sizes(i)
      bound += limits(i)
      val last = i + 1 == arr.length
      val partitionChanges = !last && arr(i + 1).add.partitionValues != arr(i).add.partitionValues
      // No block may grow near the sync interval, past which Avro would end it on its own; a
      // huge entry gets a block to itself.
      if (last || bytes >= TargetBlockBytes || (partitionChanges && bytes >= MinAlignedBlockBytes) ||
        bound + limits(i + 1) > MaxPlannedBlockBytes / 2) {
        blocks += ((from, i + 1))
        from = i + 1
        bytes = 0
        bound = 0
      }
      i += 1
    }
    blocks.result()
  }

  /** An entry's encoded size, estimated from its strings' lengths. */
  private def encodedSize(a: AddAction, perChar: Int, perString: Int, fixed: Int): Long = {
    def s(x: String): Long = if (x == null) 1 else perChar.toLong * x.length + perString
    def m(x: Map[String, String]): Long = x.iterator.map { case (k, v) => s(k) + s(v) }.sum + 2
    fixed + s(a.path) + m(a.partitionValues) + a.stats.map(s).getOrElse(1L) +
      a.minValues.map(m).getOrElse(1L) + a.maxValues.map(m).getOrElse(1L) +
      a.splitTags.map(_.iterator.map(s).sum + 2).getOrElse(1L) +
      a.docMappingRef.map(s).getOrElse(1L) + a.docMappingJson.map(s).getOrElse(1L)
  }

  private def blockIndexJson(blocks: Seq[(Map[String, PartitionBounds], Long)]): String = {
    val mapper = new ObjectMapper()
    val root = mapper.createObjectNode()
    val runs = root.putArray("blocks")
    var previous: Map[String, PartitionBounds] = null
    var records: ArrayNode = null
    blocks.foreach { case (bounds, n) =>
      if (bounds != previous) {
        val run = runs.addObject()
        val b = run.putObject("bounds")
        bounds.toSeq.sortBy(_._1).foreach { case (col, pb) =>
          val o = b.putObject(col)
          pb.min.foreach(o.put("min", _))
          pb.max.foreach(o.put("max", _))
        }
        records = run.putArray("records")
        previous = bounds
      }
      records.add(n)
    }
    mapper.writeValueAsString(root)
  }

  /** Each block's partition bounds and record count, or None if the index is absent or bad. */
  private def blockIndex(json: Option[String])
      : Option[Array[(Map[String, PartitionBounds], Long)]] =
    json.flatMap { text =>
      try {
        val out = Array.newBuilder[(Map[String, PartitionBounds], Long)]
        new ObjectMapper().readTree(text).get("blocks").elements().asScala.foreach { run =>
          val bounds = run.get("bounds").fields().asScala.map { f =>
            def bound(k: String) = Option(f.getValue.get(k)).filter(_.isTextual).map(_.asText())
            f.getKey -> PartitionBounds(bound("min"), bound("max"))
          }.toMap
          run.get("records").elements().asScala.foreach { n =>
            // Not a count: the index is dropped below, and the read goes on without it.
            if (!n.canConvertToLong) throw new NumberFormatException(s"record count $n")
            out += (bounds -> n.asLong())
          }
        }
        Some(out.result())
      } catch {
        case NonFatal(_) => None // an index we cannot read only costs the skipping
      }
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
    r.put(
      "partitionBounds",
      i.partitionBounds.map { bounds =>
        bounds.map { case (col, b) =>
          val br = new GenericData.Record(PartitionBoundsSchema)
          br.put("min", b.min.orNull)
          br.put("max", b.max.orNull)
          col -> br
        }.asJava
      }.orNull
    )
    r.put("tombstoneCount", i.tombstoneCount)
    r.put("liveEntryCount", i.liveEntryCount)
    r
  }

  private def entryRecord(schema: Schema, e: FileEntry): GenericRecord = {
    val a = e.add
    val r = new GenericData.Record(schema)
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
    r.put("companionSourceFiles", a.companionSourceFiles.map(_.asJava).orNull)
    r.put("companionDeltaVersion", a.companionDeltaVersion.map(Long.box).orNull)
    r.put("companionFastFieldMode", a.companionFastFieldMode.orNull)
    if (schema.getField("companionSourceFileSizes") != null) {
      r.put(
        "companionSourceFileSizes",
        a.companionSourceFileSizes.map(_.map(Long.box).asJava).orNull)
      r.put("companionDocsInRowOrder", a.companionDocsInRowOrder.map(Boolean.box).orNull)
      r.put(
        "companionSourceDeletionVectors",
        a.companionSourceDeletionVectors.map(_.asJava).orNull)
    }
    if (schema.getField("deletionVectorCardinality") != null) {
      val d = a.deletionVector
      r.put("deletionVectorStorageType", d.map(_.storageType).orNull)
      r.put("deletionVectorPathOrInlineDv", d.map(_.pathOrInlineDv).orNull)
      r.put("deletionVectorOffset", d.flatMap(_.offset).map(Int.box).orNull)
      r.put("deletionVectorSizeInBytes", d.map(v => Int.box(v.sizeInBytes)).orNull)
      r.put("deletionVectorCardinality", d.map(v => Long.box(v.cardinality)).orNull)
    }
    r.put("addedAtVersion", e.addedAtVersion)
    r.put("addedAtTimestamp", e.addedAtTimestamp)
    r
  }

  // ---- reading ------------------------------------------------------------------------------

  /** Decodes `_manifest.avro`; throws `INDEXTABLES_LOG_MALFORMED_STATE` when it holds no record. */
  def decodeStateManifest(bytes: Array[Byte]): StateManifest = {
    val records = read(bytes)
    if (records.isEmpty)
      throw IndexTablesErrors.malformedStateFile("the state manifest holds no record")
    val r = records.head
    StateManifest(
      formatVersion = int(r, "formatVersion").getOrElse(StateManifest.FormatVersion),
      stateVersion = required(long(r, "stateVersion"), "stateVersion"),
      createdAt = long(r, "createdAt").getOrElse(0L),
      numFiles = long(r, "numFiles").getOrElse(-1L),
      totalBytes = long(r, "totalBytes").getOrElse(-1L),
      manifests = list(r, "manifests").map {
        case m: GenericRecord => decodeManifestInfo(m)
        case other => throw IndexTablesErrors.malformedStateFile(s"unexpected manifest item $other")
      },
      tombstones = list(r, "tombstones").map(_.toString),
      schemaRegistry = stringMap(r, "schemaRegistry").getOrElse(Map.empty),
      protocolVersion = int(r, "protocolVersion").getOrElse(StateManifest.ProtocolVersion),
      metadata = string(r, "metadata")
    )
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
      liveEntryCount = long(r, "liveEntryCount").getOrElse(-1L)
    )

  /** Decodes a shared manifest into its entries, in file order. */
  def decodeFileEntries(bytes: Array[Byte]): Seq[FileEntry] = decodeFileEntries(bytes, null)

  /**
   * Decodes the entries of a shared manifest whose partition values (an Avro map: a NULL value
   * is an absent key) `keepPartition` accepts; all of them when it is null.
   */
  def decodeFileEntries(bytes: Array[Byte], keepPartition: Map[String, String] => Boolean)
      : Seq[FileEntry] = decodeFileEntries(bytes, keepPartition, null)

  /**
   * As above; with `keepBounds`, blocks of the file's block index (see [[BlockBoundsKey]])
   * whose partition bounds it rejects are passed over without being decompressed. Each block's
   * record count is checked against the index before it is trusted.
   */
  def decodeFileEntries(
      bytes: Array[Byte],
      keepPartition: Map[String, String] => Boolean,
      keepBounds: Map[String, PartitionBounds] => Boolean): Seq[FileEntry] = {
    val container = new AvroContainer(bytes)
    val reader = new FileEntryDatumReader(keepPartition)
    val out = Vector.newBuilder[FileEntry]
    if (!container.supported) {
      val stream = new DataFileStream[FileEntry](new ByteArrayInputStream(bytes), reader)
      try while (stream.hasNext) {
          val e = stream.next()
          if (e != null) out += e
        }
      finally stream.close()
      return out.result()
    }
    reader.setSchema(container.schema)
    val index = if (keepBounds == null) None else blockIndex(container.metaString(BlockBoundsKey))
    var lastBounds: Map[String, PartitionBounds] = null
    var lastAnswer = true
    var blocks = 0
    container.foreachBlock { (i, records) =>
      blocks = i + 1
      index match {
        case None => true
        case Some(ix) =>
          if (i >= ix.length || ix(i)._2 != records) {
            throw IndexTablesErrors.malformedStateFile(
              s"block $i of $records records disagrees with the file's block index")
          }
          val bounds = ix(i)._1
          if (!(bounds eq lastBounds)) { lastAnswer = keepBounds(bounds); lastBounds = bounds }
          lastAnswer
      }
    } { (records, decoder) =>
      var k = 0L
      while (k < records) {
        val e = reader.read(null, decoder)
        if (e != null) out += e
        k += 1
      }
    }
    index.foreach { ix =>
      if (blocks != ix.length) {
        throw IndexTablesErrors.malformedStateFile(
          s"the file has $blocks blocks but its block index lists ${ix.length}")
      }
    }
    out.result()
  }

  private def read(bytes: Array[Byte]): Vector[GenericRecord] = {
    val stream = new DataFileStream[GenericRecord](
      new ByteArrayInputStream(bytes),
      new GenericDatumReader[GenericRecord]())
    try {
      val out = Vector.newBuilder[GenericRecord]
      while (stream.hasNext) out += stream.next()
      out.result()
    } finally stream.close()
  }

  private def field(r: GenericRecord, name: String): Option[AnyRef] =
    if (r.getSchema.getField(name) == null) None else Option(r.get(name))

  private def required[T](v: Option[T], name: String): T =
    v.getOrElse(throw IndexTablesErrors.malformedStateFile(s"required field '$name' is missing"))

  private def string(r: GenericRecord, name: String): Option[String] =
    field(r, name).map(_.toString)
  private def long(r: GenericRecord, name: String): Option[Long] =
    field(r, name).map(_.asInstanceOf[Number].longValue())
  private def int(r: GenericRecord, name: String): Option[Int] =
    field(r, name).map(_.asInstanceOf[Number].intValue())
  private def list(r: GenericRecord, name: String): Seq[AnyRef] =
    field(r, name).map(_.asInstanceOf[java.util.Collection[AnyRef]].asScala.toVector)
      .getOrElse(Vector.empty)

  private def stringMap(r: GenericRecord, name: String): Option[Map[String, String]] =
    field(r, name).map(_.asInstanceOf[java.util.Map[AnyRef, AnyRef]].asScala.map {
      case (k, v) => k.toString -> (if (v == null) null else v.toString)
    }.toMap)
}

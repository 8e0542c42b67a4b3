package io.indextables.spark.transaction.state

import scala.jdk.CollectionConverters._

import org.apache.avro.Schema
import org.apache.avro.generic.GenericDatumReader
import org.apache.avro.io.{DatumReader, Decoder}
import org.apache.avro.util.Utf8

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.transaction.{AddAction, DeletionVectorDescriptor}

/**
 * Decodes FileEntry records straight into [[FileEntry]] values, for whatever writer schema a
 * manifest embeds: fields are matched by name, fields we do not know are read and dropped, and
 * missing optional fields read as absent. Loading a large state decodes hundreds of thousands
 * of records; going through GenericRecord, Avro's Utf8 and Java maps first would allocate
 * several times as much.
 *
 * Strings that repeat across entries (map keys such as column names, and partition values) are
 * shared, which keeps a large state's memory down.
 *
 * With `keepPartition`, an entry whose partition values it rejects is skipped without building
 * anything more of it, and `read` returns null for it. Not thread-safe: one reader per stream.
 */
private[state] final class FileEntryDatumReader(keepPartition: Map[String, String] => Boolean)
    extends DatumReader[FileEntry] {

  def this() = this(null)

  private type FieldReader = Decoder => AnyRef

  private var readers: Array[FieldReader] = Array.empty
  private var skippers: Array[Decoder => Unit] = Array.empty
  private var slots: Array[Int] = Array.empty
  private val scratch = new Utf8()
  // With a partition filter, the path (which precedes the partition values) is kept as bytes
  // until the entry is accepted, so that skipped entries cost no string.
  private val pathScratch = new Utf8()
  private val shared = new java.util.HashMap[String, String]()

  import FileEntryDatumReader._

  override def setSchema(schema: Schema): Unit = {
    val fields = schema.getFields.asScala.toArray
    readers = fields.map { f =>
      val t = f.schema().getType
      if (keepPartition != null && f.name() == "path" && t == Schema.Type.STRING) {
        (in: Decoder) => { in.readString(pathScratch); PathPending }
      } else if (keepPartition != null && f.name() == "partitionValues" && t == Schema.Type.MAP &&
        f.schema().getValueType.getType == Schema.Type.STRING) {
        (in: Decoder) => readPartitionValues(in)
      } else if (PackedMapFields(f.name()) && packable(f.schema())) {
        packedMapReader(f.schema())
      } else readerFor(f.schema(), sharedStrings = SharedValueFields(f.name()))
    }
    skippers = fields.map(f => skipperFor(f.schema()))
    slots = fields.map(f => FieldNames.indexOf(f.name()))
  }

  override def read(reuse: FileEntry, in: Decoder): FileEntry = {
    val v = new Array[AnyRef](FieldNames.length)
    var i = 0
    while (i < readers.length) {
      val value = readers(i)(in)
      if (slots(i) >= 0) v(slots(i)) = value
      i += 1
      if (slots(i - 1) == Slot.PartitionValues && keepPartition != null &&
        !accepts(value.asInstanceOf[Map[String, String]])) {
        while (i < skippers.length) { skippers(i)(in); i += 1 }
        return null
      }
    }
    def opt[T](slot: Int): Option[T] = Option(v(slot).asInstanceOf[T])
    if (v(Slot.Path) eq PathPending) v(Slot.Path) = pathScratch.toString
    val add = AddAction(
      path = opt[String](Slot.Path).getOrElse(
        throw IndexTablesErrors.malformedStateFile("required field 'path' is missing")),
      partitionValues = opt[Map[String, String]](Slot.PartitionValues).getOrElse(Map.empty),
      size = opt[java.lang.Long](Slot.Size).map(_.longValue()).getOrElse(
        throw IndexTablesErrors.malformedStateFile("required field 'size' is missing")),
      modificationTime = long(opt[java.lang.Long](Slot.ModificationTime), 0L),
      dataChange = opt[java.lang.Boolean](Slot.DataChange).forall(_.booleanValue()),
      stats = opt[String](Slot.Stats),
      minValues = opt[Map[String, String]](Slot.MinValues),
      maxValues = opt[Map[String, String]](Slot.MaxValues),
      numRecords = opt[java.lang.Long](Slot.NumRecords).map(_.longValue()),
      hasFooterOffsets = opt[java.lang.Boolean](Slot.HasFooterOffsets).exists(_.booleanValue()),
      footerStartOffset = opt[java.lang.Long](Slot.FooterStartOffset).map(_.longValue()),
      footerEndOffset = opt[java.lang.Long](Slot.FooterEndOffset).map(_.longValue()),
      splitTags = opt[Seq[String]](Slot.SplitTags).map(_.toSet),
      numMergeOps = opt[java.lang.Integer](Slot.NumMergeOps).map(_.intValue()),
      docMappingRef = opt[String](Slot.DocMappingRef),
      docMappingJson = opt[String](Slot.DocMappingJson),
      uncompressedSizeBytes = opt[java.lang.Long](Slot.UncompressedSizeBytes).map(_.longValue()),
      companionSourceFiles = opt[Seq[String]](Slot.CompanionSourceFiles),
      companionDeltaVersion = opt[java.lang.Long](Slot.CompanionDeltaVersion).map(_.longValue()),
      companionFastFieldMode = opt[String](Slot.CompanionFastFieldMode),
      // Arrays come back as their items' text.
      companionSourceFileSizes =
        opt[Seq[String]](Slot.CompanionSourceFileSizes).map(_.map(_.toLong)),
      deletionVector = opt[String](Slot.DeletionVectorPath).map { p =>
        def field[T](slot: Int, name: String): T = opt[T](slot).getOrElse(
          throw IndexTablesErrors.malformedStateFile(
            s"the entry of ${v(Slot.Path)} has a deletion vector without '$name'"))
        DeletionVectorDescriptor(
          storageType = field[String](Slot.DeletionVectorStorageType, "deletionVectorStorageType"),
          pathOrInlineDv = p,
          offset = opt[java.lang.Integer](Slot.DeletionVectorOffset).map(_.intValue()),
          sizeInBytes = field[java.lang.Integer](
            Slot.DeletionVectorSizeInBytes,
            "deletionVectorSizeInBytes").intValue(),
          cardinality = field[java.lang.Long](
            Slot.DeletionVectorCardinality,
            "deletionVectorCardinality").longValue()
        )
      },
      companionDocsInRowOrder =
        opt[java.lang.Boolean](Slot.CompanionDocsInRowOrder).map(_.booleanValue()),
      companionSourceDeletionVectors =
        opt[Seq[String]](Slot.CompanionSourceDeletionVectors)
    )
    FileEntry(
      add,
      long(opt[java.lang.Long](Slot.AddedAtVersion), 0L),
      long(opt[java.lang.Long](Slot.AddedAtTimestamp), 0L))
  }

  private def long(v: Option[java.lang.Long], default: Long): Long =
    v.map(_.longValue()).getOrElse(default)

  private def string(in: Decoder, share: Boolean): String = {
    val s = in.readString(scratch).toString
    if (!share) s
    else {
      val prior = shared.putIfAbsent(s, s)
      if (prior == null) s else prior
    }
  }

  /** A map of strings, or a union of null and one: kept packed (see [[PackedStringMap]]). */
  private def packable(schema: Schema): Boolean = schema.getType match {
    case Schema.Type.MAP => schema.getValueType.getType == Schema.Type.STRING
    case Schema.Type.UNION =>
      schema.getTypes.asScala.forall(t => t.getType == Schema.Type.NULL || packable(t))
    case _ => false
  }

  private val packed = new PackedStrings(512)

  private def packedMapReader(schema: Schema): FieldReader = schema.getType match {
    case Schema.Type.UNION =>
      val branches = schema.getTypes.asScala.map(packedMapReader).toArray
      in => branches(in.readIndex())(in)
    case Schema.Type.NULL => in => { in.readNull(); null }
    case _ =>
      in => {
        readMapInto(packed, in)
        if (packed.length == 0) Map.empty[String, String] else new PackedStringMap(packed.toArray)
      }
  }

  /** Packs the keys and values of a map<string> into `out`, in order. */
  private def readMapInto(out: PackedStrings, in: Decoder): Unit = {
    out.clear()
    var n = in.readMapStart()
    while (n > 0) {
      var i = 0L
      while (i < n) {
        out.append(in.readString(scratch)) // key
        out.append(in.readString(scratch)) // value
        i += 1
      }
      n = in.mapNext()
    }
  }

  // Entries of a compacted state come sorted by partition, so consecutive entries mostly carry
  // the same partition values: their packed bytes are compared with the previous entry's, and
  // the previous map and the filter's answer on it are reused.
  private var raw = new PackedStrings(256)
  private var prevRaw = new PackedStrings(256)
  private var prevValues: Map[String, String] = null
  private var prevAnswer = true

  private def accepts(values: Map[String, String]): Boolean =
    if (values != null && (values eq prevValues)) prevAnswer
    else keepPartition(Option(values).getOrElse(Map.empty))

  /** A map<string> of partition values, reusing the previous entry's map when identical. */
  private def readPartitionValues(in: Decoder): AnyRef = {
    readMapInto(raw, in)
    if (prevValues != null && raw.sameAs(prevRaw)) prevValues
    else {
      val b = Map.newBuilder[String, String]
      var key: String = null
      raw.foreach { s =>
        val prior = shared.putIfAbsent(s, s)
        val value = if (prior == null) s else prior
        if (key == null) key = value else { b += key -> value; key = null }
      }
      val values = b.result()
      val swap = prevRaw
      prevRaw = raw
      raw = swap
      prevValues = values
      prevAnswer = keepPartition(values)
      values
    }
  }

  /** Reads past a value of `schema` without building it. */
  private def skipperFor(schema: Schema): Decoder => Unit = schema.getType match {
    case Schema.Type.NULL => _.readNull()
    case Schema.Type.BOOLEAN => _.readBoolean()
    case Schema.Type.INT => _.readInt()
    case Schema.Type.LONG => _.readLong()
    case Schema.Type.FLOAT => _.readFloat()
    case Schema.Type.DOUBLE => _.readDouble()
    case Schema.Type.STRING => _.skipString()
    case Schema.Type.BYTES => _.skipBytes()
    case Schema.Type.UNION =>
      val branches = schema.getTypes.asScala.map(skipperFor).toArray
      in => branches(in.readIndex())(in)
    case Schema.Type.MAP =>
      val value = skipperFor(schema.getValueType)
      in => {
        var n = in.skipMap()
        while (n > 0) {
          var i = 0L
          while (i < n) { in.skipString(); value(in); i += 1 }
          n = in.skipMap()
        }
      }
    case Schema.Type.ARRAY =>
      val item = skipperFor(schema.getElementType)
      in => {
        var n = in.skipArray()
        while (n > 0) {
          var i = 0L
          while (i < n) { item(in); i += 1 }
          n = in.skipArray()
        }
      }
    case _ =>
      val reader = readerFor(schema, sharedStrings = false)
      in => reader(in)
  }

  private def readerFor(schema: Schema, sharedStrings: Boolean): FieldReader =
    schema.getType match {
      case Schema.Type.NULL => in => { in.readNull(); null }
      case Schema.Type.BOOLEAN => in => java.lang.Boolean.valueOf(in.readBoolean())
      case Schema.Type.INT => in => java.lang.Integer.valueOf(in.readInt())
      case Schema.Type.LONG => in => java.lang.Long.valueOf(in.readLong())
      case Schema.Type.FLOAT => in => java.lang.Float.valueOf(in.readFloat())
      case Schema.Type.DOUBLE => in => java.lang.Double.valueOf(in.readDouble())
      case Schema.Type.STRING => in => string(in, sharedStrings)
      case Schema.Type.UNION =>
        val branches = schema.getTypes.asScala.map(readerFor(_, sharedStrings)).toArray
        in => branches(in.readIndex())(in)
      case Schema.Type.MAP =>
        val value = readerFor(schema.getValueType, sharedStrings)
        in => {
          val keys = new java.util.ArrayList[String](8)
          val values = new java.util.ArrayList[String](8)
          var n = in.readMapStart()
          while (n > 0) {
            var i = 0L
            while (i < n) {
              keys.add(string(in, share = true))
              values.add(value(in) match {
                case null => null
                case s => s.toString
              })
              i += 1
            }
            n = in.mapNext()
          }
          PackedStringMap.build(keys, values)
        }
      case Schema.Type.ARRAY =>
        val item = readerFor(schema.getElementType, sharedStrings)
        in => {
          val b = Vector.newBuilder[String]
          var n = in.readArrayStart()
          while (n > 0) {
            var i = 0L
            while (i < n) {
              b += String.valueOf(item(in))
              i += 1
            }
            n = in.arrayNext()
          }
          b.result()
        }
      case _ =>
        // Records, enums, fixed and bytes: no FileEntry field of ours; read and dropped.
        val generic = new GenericDatumReader[AnyRef](schema)
        in => { generic.read(null, in); null }
    }
}

private object FileEntryDatumReader {

  /** Marks a path read into the reader's path buffer, not yet made a string. */
  private val PathPending: AnyRef = new Object

  private val FieldNames: IndexedSeq[String] = Vector(
    "path",
    "partitionValues",
    "size",
    "modificationTime",
    "dataChange",
    "stats",
    "minValues",
    "maxValues",
    "numRecords",
    "hasFooterOffsets",
    "footerStartOffset",
    "footerEndOffset",
    "splitTags",
    "numMergeOps",
    "docMappingRef",
    "docMappingJson",
    "uncompressedSizeBytes",
    "addedAtVersion",
    "addedAtTimestamp",
    "companionSourceFiles",
    "companionDeltaVersion",
    "companionFastFieldMode",
    "companionSourceFileSizes",
    "deletionVectorStorageType",
    "deletionVectorPathOrInlineDv",
    "deletionVectorOffset",
    "deletionVectorSizeInBytes",
    "deletionVectorCardinality",
    "companionDocsInRowOrder",
    "companionSourceDeletionVectors"
  )

  /** The position in [[FieldNames]] of each field. */
  object Slot {
    final val Path = 0
    final val PartitionValues = 1
    final val Size = 2
    final val ModificationTime = 3
    final val DataChange = 4
    final val Stats = 5
    final val MinValues = 6
    final val MaxValues = 7
    final val NumRecords = 8
    final val HasFooterOffsets = 9
    final val FooterStartOffset = 10
    final val FooterEndOffset = 11
    final val SplitTags = 12
    final val NumMergeOps = 13
    final val DocMappingRef = 14
    final val DocMappingJson = 15
    final val UncompressedSizeBytes = 16
    final val AddedAtVersion = 17
    final val AddedAtTimestamp = 18
    final val CompanionSourceFiles = 19
    final val CompanionDeltaVersion = 20
    final val CompanionFastFieldMode = 21
    final val CompanionSourceFileSizes = 22
    final val DeletionVectorStorageType = 23
    final val DeletionVectorPath = 24
    final val DeletionVectorOffset = 25
    final val DeletionVectorSizeInBytes = 26
    final val DeletionVectorCardinality = 27
    final val CompanionDocsInRowOrder = 28
    final val CompanionSourceDeletionVectors = 29
  }

  /** Maps that most reads never look into, kept packed until they do. */
  private val PackedMapFields: Set[String] = Set("minValues", "maxValues")

  /** Fields whose string values repeat across entries and are worth sharing. */
  private val SharedValueFields: Set[String] = Set("partitionValues", "docMappingRef")
}

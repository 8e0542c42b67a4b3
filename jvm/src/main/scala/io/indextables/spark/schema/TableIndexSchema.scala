package io.indextables.spark.schema

import java.util.Locale

import org.apache.spark.sql.types._

import io.indextables.spark.IndexTablesErrors

/**
 * The table's schema as the index sees it: partition columns (kept out of splits, held in the
 * log) and data columns, each with how a split holds it ([[IndexedField]]). A schema derived
 * from one split's doc mapping may lack columns the table gained later (`absent`): that split
 * holds no value of them, so they read as NULL. Immutable; built on the driver, shipped to
 * executors.
 */
final case class TableIndexSchema(
    schema: StructType,
    partitionColumns: Seq[String],
    fields: Seq[IndexedField],
    absent: Set[String] = Set.empty,
    exactFloatRanges: Set[String] = Set.empty) {

  private val byName = fields.map(f => f.name -> f).toMap

  def field(name: String): Option[IndexedField] = byName.get(name)

  def isPartitionColumn(name: String): Boolean = partitionColumns.contains(name)

  /** JSON columns these splits' mapping leaves out: objects without keys, if any (read only). */
  def unmappedJson: Set[String] =
    fields.collect { case f if f.kind == IndexKind.Json && !f.indexed => f.name }.toSet

  /**
   * These splits as a companion layout holds them: every data column is stored, in the Parquet
   * files the splits index, and one the index leaves out is there but not indexed.
   */
  def servedFromParquet: TableIndexSchema = {
    val mapped = fields.map(_.name).toSet
    val unindexed = dataSchema.fields.toSeq.filterNot(f => mapped.contains(f.name)).map { f =>
      IndexedField(
        f.name,
        f.dataType,
        TableIndexSchema.kindOf(f.dataType),
        indexed = false,
        fast = false)
    }
    copy(fields = fields.map(_.copy(stored = true)) ++ unindexed, absent = Set.empty)
  }

  /** A data column of the table that these splits do not hold: NULL in every row. */
  def isAbsent(name: String): Boolean = absent.contains(name)

  def partitionSchema: StructType = StructType(partitionColumns.map(c => schema(c)))

  def dataSchema: StructType = StructType(schema.filterNot(f => partitionColumns.contains(f.name)))

  /** The index type of every string column (string, text, json or ip). */
  def typemap: Map[String, String] =
    fields.collect { case f if f.dataType == StringType => f.name -> f.kind.name }.toMap

  /**
   * How the table records its indexing in the metadata's configuration, under upstream's keys:
   * the index type of every string column, the tokenizer of every text column, and the columns
   * whose defaults were changed (fast, not fast, stored only, indexed only).
   */
  def indexingConfiguration: Map[String, String] = {
    val typemapEntries = typemap.map { case (c, t) => (IndexingRequest.TypemapPrefix + c) -> t }
    val tokenizers = fields.collect {
      case f if f.kind == IndexKind.Text && f.tokenizer.exists(_ != "default") =>
        (IndexingRequest.TokenizerPrefix + f.name) -> f.tokenizer.get
    }
    def list(key: String, p: IndexedField => Boolean) = {
      val names = fields.filter(p).map(_.name)
      if (names.isEmpty) None else Some(key -> names.sorted.mkString(","))
    }
    val defaults = fields.map(f => f.name -> TableIndexSchema.defaultFast(f.kind)).toMap
    (typemapEntries ++ tokenizers ++ Seq(
      list(IndexingRequest.FastFieldsKey, f => f.fast && !defaults(f.name)),
      list(IndexingRequest.NonFastFieldsKey, f => !f.fast && defaults(f.name) && f.indexed),
      list(IndexingRequest.StoreOnlyFieldsKey, f => !f.indexed),
      list(IndexingRequest.IndexOnlyFieldsKey, f => !f.stored)
    ).flatten).toMap
  }
}

object TableIndexSchema {

  /** Fast unless asked otherwise: everything but tokenized text and JSON. */
  /** The index kind of a column of `dt` with no typemap entry. */
  def kindOf(dt: DataType): IndexKind = dt match {
    case StringType => IndexKind.RawString
    case dt if IntegerTypes.contains(dt) => IndexKind.I64
    case DoubleType | FloatType | _: DecimalType => IndexKind.F64
    case BooleanType => IndexKind.Bool
    case DateType | TimestampType => IndexKind.DateTime
    case BinaryType => IndexKind.Bytes
    case _ => IndexKind.Json
  }

  def defaultFast(kind: IndexKind): Boolean = kind match {
    case IndexKind.Text | IndexKind.Json => false
    case _ => true
  }

  /** [[resolve]] with an index type per column (lower-cased names) and nothing else asked. */
  def resolve(
      schema: StructType,
      partitionColumns: Seq[String],
      typemap: Map[String, String]): TableIndexSchema =
    resolve(schema, partitionColumns, IndexingRequest(typemap = typemap))

  /**
   * Checks every column and every indexing option before anything is written and says how each
   * column is held. A request that names an unknown column, a partition column, or a combination
   * the index cannot hold fails, naming the key and the column.
   */
  def resolve(
      schema: StructType,
      partitionColumns: Seq[String],
      request: IndexingRequest): TableIndexSchema = {
    val lowerNames = schema.fieldNames.map(_.toLowerCase(Locale.ROOT)).toSet
    request.columns.foreach { col =>
      if (!lowerNames.contains(col))
        throw IndexTablesErrors.indexingOptionForMissingColumn(request.keyFor(col), col)
    }
    request.typemap.foreach { case (col, t) =>
      if (!IndexingRequest.IndexTypes.contains(t)) throw IndexTablesErrors.unknownIndexType(col, t)
    }
    request.tokenizers.foreach { case (col, t) =>
      if (!IndexingRequest.Tokenizers.contains(t))
        throw IndexTablesErrors.invalidIndexing(
          request.keyFor(col),
          s"unknown tokenizer '$t'; use ${IndexingRequest.Tokenizers.mkString(", ")}")
    }
    def both(a: Set[String], b: Set[String], ka: String, kb: String): Unit =
      (a intersect b).headOption.foreach { c =>
        throw IndexTablesErrors.invalidIndexing(ka, s"column '$c' is also in $kb")
      }
    both(
      request.fast,
      request.nonFast,
      IndexingRequest.FastFieldsKey,
      IndexingRequest.NonFastFieldsKey)
    both(
      request.storeOnly,
      request.indexOnly,
      IndexingRequest.StoreOnlyFieldsKey,
      IndexingRequest.IndexOnlyFieldsKey)
    both(
      request.storeOnly,
      request.fast,
      IndexingRequest.StoreOnlyFieldsKey,
      IndexingRequest.FastFieldsKey)
    partitionColumns.foreach { p =>
      val f = schema.find(_.name == p).getOrElse(throw IndexTablesErrors.partitionColumnMissing(p))
      val lower = p.toLowerCase(Locale.ROOT)
      if (request.columns.contains(lower))
        throw IndexTablesErrors.indexingOnPartitionColumn(request.keyFor(lower), p)
      f.dataType match {
        case StringType | ByteType | ShortType | IntegerType | LongType | BooleanType | DoubleType |
            DateType | TimestampType =>
        case other => throw IndexTablesErrors.unsupportedPartitionType(p, other)
      }
    }
    val fields = schema.fields.toSeq.filterNot(f => partitionColumns.contains(f.name))
      .map(f => fieldOf(f.name, f.dataType, request))
    TableIndexSchema(schema, partitionColumns, fields)
  }

  private def fieldOf(column: String, dt: DataType, request: IndexingRequest): IndexedField = {
    val lower = column.toLowerCase(Locale.ROOT)
    val requested = request.typemap.get(lower)
    val tokenizer = request.tokenizers.get(lower)
    requested.foreach { t =>
      if (dt != StringType) throw IndexTablesErrors.indexTypeNeedsString(column, t, dt)
    }
    tokenizer.foreach { t =>
      if (dt != StringType)
        throw IndexTablesErrors.invalidIndexing(
          request.keyFor(lower),
          s"column '$column' is of type ${dt.simpleString}; tokenizers apply to string columns")
    }
    val kind = dt match {
      case StringType => (requested, tokenizer) match {
          case (Some("text"), _) => IndexKind.Text
          case (Some("json"), _) => IndexKind.Json
          case (Some("ip"), None) => IndexKind.Ip
          case (Some("string"), None | Some("raw")) => IndexKind.RawString
          case (None, None | Some("raw")) => IndexKind.RawString
          case (None, Some(_)) => IndexKind.Text
          case (Some(t), Some(tok)) => throw IndexTablesErrors.invalidIndexing(
              request.keyFor(lower),
              s"column '$column' is indexed as '$t', which takes no tokenizer '$tok'")
          case (Some(t), None) => throw IndexTablesErrors.unknownIndexType(column, t)
        }
      case dt if IntegerTypes.contains(dt) => IndexKind.I64
      case DoubleType | FloatType => IndexKind.F64
      case d: DecimalType => checkDecimal(column, d); IndexKind.F64
      case BooleanType => IndexKind.Bool
      case DateType | TimestampType => IndexKind.DateTime
      case BinaryType => IndexKind.Bytes
      case s: StructType =>
        s.fields.foreach(c => checkNested(s"$column.${c.name}", c.dataType)); IndexKind.Json
      case a: ArrayType => checkNested(s"$column.element", a.elementType); IndexKind.Json
      case m: MapType => checkNested(column, m); IndexKind.Json
      case other => throw IndexTablesErrors.unsupportedType(column, other)
    }
    val storeOnly = request.storeOnly.contains(lower)
    if (storeOnly && kind == IndexKind.Json)
      throw IndexTablesErrors.invalidIndexing(
        IndexingRequest.StoreOnlyFieldsKey,
        s"column '$column' is a JSON object, which tantivy cannot store without indexing")
    if (request.fast.contains(lower) && kind == IndexKind.Json)
      throw IndexTablesErrors.invalidIndexing(
        IndexingRequest.FastFieldsKey,
        s"column '$column' is a JSON object; JSON fields are not made fast")
    // A stored-only string is one unindexed field whatever its tokenizer.
    val heldKind = if (storeOnly && kind == IndexKind.Text) IndexKind.RawString else kind
    val fast =
      if (storeOnly || request.nonFast.contains(lower)) false
      else request.fast.contains(lower) || defaultFast(heldKind)
    IndexedField(
      column,
      dt,
      heldKind,
      tokenizer = if (heldKind == IndexKind.Text) Some(tokenizer.getOrElse("default")) else None,
      indexed = !storeOnly,
      stored = !request.indexOnly.contains(lower),
      fast = fast
    )
  }

  /** Decimals go through doubles, which hold 15 significant digits exactly, and no more. */
  private def checkDecimal(column: String, d: DecimalType): Unit =
    if (d.precision > MaxDecimalPrecision) throw IndexTablesErrors.decimalTooPrecise(column, d)

  val MaxDecimalPrecision: Int = 15

  private def checkNested(path: String, dt: DataType): Unit = dt match {
    case StringType | LongType | IntegerType | DoubleType | FloatType | BooleanType | DateType |
        TimestampType =>
    case d: DecimalType => checkDecimal(path, d)
    case s: StructType => s.fields.foreach(c => checkNested(s"$path.${c.name}", c.dataType))
    case a: ArrayType => checkNested(s"$path.element", a.elementType)
    case m: MapType if m.keyType == StringType => checkNested(s"$path.value", m.valueType)
    case other => throw IndexTablesErrors.unsupportedType(path, other)
  }
}

package io.indextables.spark.schema

import java.util.Locale

import org.apache.spark.sql.types._

import io.indextables.spark.IndexTablesErrors

/**
 * The table's schema as the index sees it: partition columns (kept out of splits, held in the
 * log) and data columns, each with its [[IndexKind]]. Immutable; built on the driver, shipped to
 * executors.
 */
final case class TableIndexSchema(
    schema: StructType,
    partitionColumns: Seq[String],
    fields: Seq[IndexedField]) {

  private val byName = fields.map(f => f.name -> f).toMap

  def field(name: String): Option[IndexedField] = byName.get(name)

  def isPartitionColumn(name: String): Boolean = partitionColumns.contains(name)

  def partitionSchema: StructType = StructType(partitionColumns.map(c => schema(c)))

  def dataSchema: StructType = StructType(schema.filterNot(f => partitionColumns.contains(f.name)))

  /** The typemap the table records, for every string column (text/json/string). */
  def typemap: Map[String, String] =
    fields.collect { case f if f.dataType == StringType => f.name -> f.kind.name }.toMap
}

object TableIndexSchema {
  val IndexTypes: Set[String] = Set("string", "text", "json")

  /**
   * Checks every column before anything is written and gives each its index kind.
   *
   * @param typemap column name (lower case) to `string`, `text` or `json`
   */
  def resolve(
      schema: StructType,
      partitionColumns: Seq[String],
      typemap: Map[String, String]): TableIndexSchema = {
    val lowerNames = schema.fieldNames.map(_.toLowerCase(Locale.ROOT)).toSet
    typemap.foreach { case (col, t) =>
      if (!lowerNames.contains(col)) throw IndexTablesErrors.typemapForMissingColumn(col)
      if (!IndexTypes.contains(t)) throw IndexTablesErrors.unknownIndexType(col, t)
    }
    partitionColumns.foreach { p =>
      val f = schema.find(_.name == p).getOrElse(throw IndexTablesErrors.partitionColumnMissing(p))
      if (typemap.contains(p.toLowerCase(Locale.ROOT)))
        throw IndexTablesErrors.typemapOnPartitionColumn(p)
      f.dataType match {
        case StringType | IntegerType | LongType | BooleanType | DoubleType | DateType |
            TimestampType =>
        case other => throw IndexTablesErrors.unsupportedPartitionType(p, other)
      }
    }
    val fields = schema.fields.toSeq.filterNot(f => partitionColumns.contains(f.name)).map { f =>
      val requested = typemap.get(f.name.toLowerCase(Locale.ROOT))
      IndexedField(f.name, f.dataType, kindOf(f.name, f.dataType, requested))
    }
    TableIndexSchema(schema, partitionColumns, fields)
  }

  private def kindOf(column: String, dt: DataType, requested: Option[String]): IndexKind = {
    requested.foreach { t =>
      if (dt != StringType) throw IndexTablesErrors.indexTypeNeedsString(column, t, dt)
    }
    dt match {
      case StringType => requested match {
          case Some("text") => IndexKind.Text
          case Some("json") => IndexKind.Json
          case _ => IndexKind.RawString
        }
      case LongType | IntegerType => IndexKind.I64
      case DoubleType | FloatType | _: DecimalType => IndexKind.F64
      case BooleanType => IndexKind.Bool
      case DateType | TimestampType => IndexKind.DateTime
      case BinaryType => IndexKind.Bytes
      case s: StructType =>
        s.fields.foreach(c => checkNested(s"$column.${c.name}", c.dataType)); IndexKind.Json
      case a: ArrayType => checkNested(s"$column.element", a.elementType); IndexKind.Json
      case other => throw IndexTablesErrors.unsupportedType(column, other)
    }
  }

  private def checkNested(path: String, dt: DataType): Unit = dt match {
    case StringType | LongType | IntegerType | DoubleType | FloatType | BooleanType | DateType |
        TimestampType | _: DecimalType =>
    case s: StructType => s.fields.foreach(c => checkNested(s"$path.${c.name}", c.dataType))
    case a: ArrayType => checkNested(s"$path.element", a.elementType)
    case other => throw IndexTablesErrors.unsupportedType(path, other)
  }
}

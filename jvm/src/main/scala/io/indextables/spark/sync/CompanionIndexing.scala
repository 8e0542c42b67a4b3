package io.indextables.spark.sync

import java.util.Locale

import org.apache.spark.sql.types.{StringType, StructType}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.schema.{IndexedField, IndexingRequest, TableIndexSchema}

/**
 * How a companion index indexes its source's data columns: which it leaves out (readable from
 * the Parquet files, never searched), how it indexes each string column, and its fast field
 * mode. The first build records it in the index's metadata; a later build that names no clause
 * takes the recorded one, and one that asks for another fails. Immutable; driver side.
 *
 * @param indexSchema the indexed data columns, and the partition columns
 * @param excluded    the data columns left out of the index
 */
final case class CompanionIndexing(
    indexSchema: TableIndexSchema,
    excluded: Seq[String],
    fastFieldMode: String) {

  /** The fields tantivy4java indexes. */
  def fields: Seq[IndexedField] = indexSchema.fields

  /** What the index's metadata configuration records of it. */
  def configuration: Map[String, String] =
    indexSchema.indexingConfiguration ++ Map(
      CompanionIndexing.ExcludedColumnsKey -> excluded.mkString(","),
      CompanionIndexing.FastFieldModeKey -> fastFieldMode)
}

object CompanionIndexing {
  val ExcludedColumnsKey = "indextables.companion.excludedColumns"
  val FastFieldModeKey = "indextables.companion.fastFieldMode"

  /**
   * The indexing `request` asks for over a source of `data` and `partitions` columns, or, for
   * an index that exists, the one its metadata `recorded` (which the request must not contradict).
   *
   * @param source the source, for errors
   * @param index  the index location, for errors
   */
  def resolve(
      source: String,
      index: String,
      data: StructType,
      partitions: StructType,
      request: CompanionBuildRequest,
      recorded: Option[Map[String, String]],
      recordedColumns: Option[Seq[String]] = None): CompanionIndexing = {
    val names = data.fieldNames.toSeq
    def column(clause: String, c: String): String =
      names.find(_.equalsIgnoreCase(c)).getOrElse(
        throw IndexTablesErrors.companionUnknownColumn(clause, c, names))
    val askedExcluded =
      if (request.includeColumns.isEmpty && request.excludeColumns.isEmpty) None
      else {
        val included = request.includeColumns.map(_.map(column("INCLUDE COLUMNS", _)).toSet)
        val excluded = request.excludeColumns.getOrElse(Nil).map(column("EXCLUDE COLUMNS", _))
        Some(names.filter(n => !included.forall(_.contains(n)) || excluded.contains(n)))
      }
    val askedModes = request.indexingModes.map(_.map { case (c, m) =>
      val name = column("INDEXING MODES", c)
      val mode = CompanionBuildRequest.Modes.getOrElse(
        m.toLowerCase(Locale.ROOT),
        throw IndexTablesErrors.companionUnknownIndexingMode(name, m))
      if (data(name).dataType != StringType) throw IndexTablesErrors.companionInvalidOption(
        "INDEXING MODES",
        s"$name: $m",
        s"column $name is of type ${data(name).dataType.simpleString}; indexing modes apply " +
          "to string columns")
      name -> mode
    }.toMap)
    val excluded = askedExcluded.orElse(recorded.map(excludedOf)).getOrElse(Nil)
    // The recorded modes are those of the columns indexed then: a changed choice of columns is
    // refused below, by name, not here as a mode for a column left out.
    val modes = askedModes
      .orElse(recorded.map(typemapOf(_, names).filter(m => !excluded.contains(m._1))))
      .getOrElse(Map.empty)
    val fastFieldMode = request.fastFieldMode.orElse(recorded.flatMap(_.get(FastFieldModeKey)))
      .getOrElse(CompanionBuildRequest.DefaultFastFieldMode)
    modes.keys.find(excluded.contains).foreach { c =>
      throw IndexTablesErrors.companionInvalidOption(
        "INDEXING MODES",
        s"$c: ${modes(c)}",
        s"column $c is left out of the index (INCLUDE / EXCLUDE COLUMNS)")
    }
    // Every column, indexed or not: the index's searches read the rows back through
    // tantivy4java, which serves only the types the index can hold.
    data.fields.foreach { f =>
      try TableIndexSchema.resolve(StructType(Seq(f)), Nil, typemap(modes.filter(_._1 == f.name)))
      catch {
        case e: IndexTablesException if e.errorClass == "INDEXTABLES_UNSUPPORTED_TYPE" =>
          throw IndexTablesErrors.companionColumnUnsupported(source, f.name, f.dataType, e.reason)
      }
    }
    val indexed = data.fields.toSeq.filterNot(f => excluded.contains(f.name))
    val schema = TableIndexSchema.resolve(
      StructType(indexed ++ partitions.fields),
      partitions.fieldNames.toSeq,
      typemap(modes))
    val result = CompanionIndexing(schema, excluded, fastFieldMode)
    // Columns the source gained since take the request's choices, or the defaults.
    recorded.foreach(r =>
      checkUnchanged(
        index,
        r,
        result,
        recordedColumns.map(_.filter(names.contains)).getOrElse(names)))
    result
  }

  private def typemap(modes: Map[String, String]): IndexingRequest =
    IndexingRequest(typemap = modes.map { case (c, m) => c.toLowerCase(Locale.ROOT) -> m })

  private def excludedOf(config: Map[String, String]): Seq[String] =
    config.getOrElse(ExcludedColumnsKey, "").split(",").filter(_.nonEmpty).toSeq

  /** The index kind the metadata records for each string column (`typemap.<column>`). */
  private def typemapOf(config: Map[String, String], names: Seq[String]): Map[String, String] =
    config.collect {
      case (k, v) if k.startsWith(IndexingRequest.TypemapPrefix) =>
        val c = k.stripPrefix(IndexingRequest.TypemapPrefix)
        names.find(_.equalsIgnoreCase(c)).getOrElse(c) -> v
    }

  /**
   * Fails, naming the clause, when `now` indexes the columns `names` (those the index held
   * before) otherwise than the index `recorded`.
   */
  private def checkUnchanged(
      index: String,
      recorded: Map[String, String],
      now: CompanionIndexing,
      names: Seq[String]): Unit = {
    def changed(clause: String, was: String, is: String) =
      IndexTablesErrors.companionIndexingChanged(index, clause, was, is)
    val was = excludedOf(recorded).filter(names.contains)
    if (was.toSet != now.excluded.filter(names.contains).toSet) {
      def indexed(ex: Seq[String]) =
        names.filterNot(ex.contains).mkString("the columns (", ", ", ")")
      throw changed("INCLUDE / EXCLUDE COLUMNS", indexed(was), indexed(now.excluded))
    }
    val wasModes = typemapOf(recorded, names).filter(m => names.contains(m._1))
    val nowModes =
      typemapOf(now.indexSchema.indexingConfiguration, names).filter(m => names.contains(m._1))
    if (wasModes != nowModes) {
      def show(m: Map[String, String]) =
        m.toSeq.sorted.map { case (c, k) => s"$c: '$k'" }.mkString("(", ", ", ")")
      throw changed("INDEXING MODES", show(wasModes), show(nowModes))
    }
    recorded.get(FastFieldModeKey).filter(_ != now.fastFieldMode).foreach { m =>
      throw changed("FASTFIELDS MODE", m, now.fastFieldMode)
    }
  }
}

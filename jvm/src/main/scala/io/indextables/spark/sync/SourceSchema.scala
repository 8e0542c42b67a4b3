package io.indextables.spark.sync

import org.apache.spark.sql.types.StructType

/**
 * How a companion index's columns follow its source's, as Delta's `mergeSchema` does: a column
 * the source gains joins the index (the splits built before read it as NULL, as they do on a
 * table appended to with `mergeSchema`); a column that changes type, or leaves, is an error
 * naming it. Nullability aside, as Spark's file sources read every column nullable. Pure.
 */
object SourceSchema {

  /**
   * The data columns of an index that held `recorded` once its source holds `found`, in the
   * source's order (the recorded columns kept as recorded); or why it cannot follow, naming the
   * first column at fault.
   */
  def evolve(recorded: StructType, found: StructType): Either[String, StructType] = {
    val now = ParquetFooters.asNullable(found)
    val was = ParquetFooters.asNullable(recorded)
    was.fields.find(c => !now.fieldNames.contains(c.name)) match {
      case Some(gone) =>
        Left(s"it no longer holds the column '${gone.name}' (${gone.dataType.simpleString}); " +
          "an index keeps every column it holds")
      case None =>
        was.fields.find(c => now(c.name).dataType != c.dataType).map(c =>
          Left(typeChanged(c.name, c.dataType.simpleString, now(c.name).dataType.simpleString)))
          .getOrElse(Right(StructType(found.fields.map(f =>
            recorded.find(_.name == f.name).getOrElse(f)))))
    }
  }

  /**
   * Why a Parquet file of `file` columns cannot be indexed into an index of `schema`, if it
   * cannot: a column the index does not hold, or holds as another type; or, unless `mayLack`
   * (its source table's log gives the schema, so its older files lack the columns added since),
   * a column of the index the file lacks.
   */
  def misfit(file: StructType, schema: StructType, mayLack: Boolean): Option[String] = {
    val have = ParquetFooters.asNullable(file)
    val want = ParquetFooters.asNullable(schema)
    have.fields.collectFirst {
      case c if !want.fieldNames.contains(c.name) =>
        s"it holds the column '${c.name}', which the index does not"
      case c if want(c.name).dataType != c.dataType =>
        typeChanged(c.name, want(c.name).dataType.simpleString, c.dataType.simpleString)
    }.orElse(
      if (mayLack) None
      else want.fields.find(c => !have.fieldNames.contains(c.name))
        .map(c => s"it lacks the column '${c.name}'"))
  }

  private def typeChanged(column: String, was: String, now: String) =
    s"the column '$column' is of type $now, where the index holds it as $was"
}

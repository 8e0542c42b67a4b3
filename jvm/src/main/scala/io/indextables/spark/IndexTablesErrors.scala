package io.indextables.spark

import org.apache.spark.sql.types.DataType

import io.indextables.spark.exceptions.IndexTablesException

/** Every user-facing error of the plugin, one factory method each. */
object IndexTablesErrors {

  def invalidOption(key: String, value: String, cause: Throwable): IndexTablesException =
    new IndexTablesException(s"Invalid value '$value' for option '$key': ${cause.getMessage}", cause)

  def bothTimeTravelOptions(): IndexTablesException =
    new IndexTablesException(
      "Give either versionAsOf or timestampAsOf to read an earlier version, not both.")

  def notATable(path: String): IndexTablesException =
    new IndexTablesException(
      s"'$path' is not an IndexTables table: it has no _transaction_log/00000000000000000000.json. " +
        "Write a DataFrame to it with format('indextables') first, or check the path.")

  def pathRequired(): IndexTablesException =
    new IndexTablesException("IndexTables needs a table path: use .load(path) or .save(path).")

  def unsupportedType(column: String, dataType: DataType): IndexTablesException =
    new IndexTablesException(
      s"Column '$column' has type ${dataType.simpleString}, which IndexTables cannot index. " +
        "Supported: string, long, int, double, float, boolean, date, timestamp, decimal, binary, " +
        "struct and array of these. Cast the column or drop it before writing.")

  def unsupportedPartitionType(column: String, dataType: DataType): IndexTablesException =
    new IndexTablesException(
      s"Partition column '$column' has type ${dataType.simpleString}; partition columns must be " +
        "string, int, long, boolean, double, date or timestamp.")

  def unknownIndexType(column: String, value: String): IndexTablesException =
    new IndexTablesException(
      s"Unknown index type '$value' for column '$column' in spark.indextables.indexing.typemap." +
        s"$column: use string, text or json.")

  def indexTypeNeedsString(column: String, indexType: String, dataType: DataType): IndexTablesException =
    new IndexTablesException(
      s"Column '$column' is of type ${dataType.simpleString}; index type '$indexType' applies to " +
        "string columns only.")

  def typemapForMissingColumn(column: String): IndexTablesException =
    new IndexTablesException(
      s"spark.indextables.indexing.typemap.$column names a column that the data does not have.")

  def partitionColumnMissing(column: String): IndexTablesException =
    new IndexTablesException(s"Partition column '$column' is not a column of the data.")

  def typemapOnPartitionColumn(column: String): IndexTablesException =
    new IndexTablesException(
      s"spark.indextables.indexing.typemap.$column applies to a partition column; partition " +
        "values live in directory names and the log, not in the index. Remove the option.")

  def typemapChanged(table: String, column: String, was: String, now: String): IndexTablesException =
    new IndexTablesException(
      s"Table $table indexes column '$column' as '$was'; a write cannot change it to '$now'. " +
        "Overwrite the table to change how it is indexed.")

  def schemaMismatch(table: String, expected: String, actual: String): IndexTablesException =
    new IndexTablesException(
      s"Cannot append to table $table: the data's schema $actual does not match the table's " +
        s"schema $expected. Use mode('overwrite') to replace the table.")

  def partitioningMismatch(table: String, expected: Seq[String], actual: Seq[String]): IndexTablesException =
    new IndexTablesException(
      s"Table $table is partitioned by [${expected.mkString(", ")}], but the write asks for " +
        s"[${actual.mkString(", ")}].")

  def tableExists(path: String): IndexTablesException =
    new IndexTablesException(
      s"Table $path already exists (save mode ErrorIfExists). Use mode('append') or " +
        "mode('overwrite').")

  def splitReadFailed(splitPath: String, cause: Throwable): IndexTablesException =
    new IndexTablesException(
      s"Cannot read split file $splitPath: ${Option(cause.getMessage).getOrElse(cause.toString)}. " +
        "The file is missing or corrupt; the table's log still lists it.", cause)

  def splitMissing(splitPath: String): IndexTablesException =
    new IndexTablesException(
      s"Split file $splitPath listed in the transaction log does not exist. It was deleted " +
        "outside IndexTables; restore it or overwrite the table.")

  def writeFailed(what: String, cause: Throwable): IndexTablesException =
    new IndexTablesException(s"Writing $what failed: ${cause.getMessage}", cause)
}

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

  /** The native search of a readable split failed, e.g. for a query the field cannot serve. */
  def searchFailed(splitPath: String, query: String, cause: Throwable): IndexTablesException =
    new IndexTablesException(
      s"Search of split $splitPath failed for query $query: " +
        s"${Option(cause.getMessage).getOrElse(cause.toString)}", cause)

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

  // IndexQuery (indexquery / indexqueryall / textsearch / fieldmatch)

  def invalidIndexQuery(query: String, reason: String): IndexTablesException =
    new IndexTablesException(
      s"Invalid IndexQuery '$query': $reason. Use tantivy query syntax, e.g. 'timeout OR " +
        "connection', 'level:ERROR AND \"connection reset\"' or 'latency:[100 TO 200]'.")

  def indexQueryNotPushed(expression: String): IndexTablesException =
    new IndexTablesException(
      s"$expression could not be pushed into an IndexTables scan, and Spark cannot evaluate it row " +
        "by row. Use it in the WHERE clause of a query over one IndexTables table, combined with " +
        "AND, OR and NOT only with predicates on that same table.")

  def indexQueryOutsideFilter(expression: String, node: String): IndexTablesException =
    new IndexTablesException(
      s"$expression is only supported in a WHERE (or HAVING) condition, not in $node.")

  def indexQueryNeedsColumn(expression: String, what: String): IndexTablesException =
    new IndexTablesException(
      s"$expression: '$what' is not a column of an IndexTables table. The left side of " +
        "indexquery must be a plain column, read from an IndexTables table.")

  def indexQueryNotOnIndexTables(expression: String, source: String): IndexTablesException =
    new IndexTablesException(
      s"$expression applies to $source, which is not an IndexTables table. indexquery works " +
        "only on tables read with format('indextables').")

  def indexQueryOnPartitionColumn(expression: String, column: String): IndexTablesException =
    new IndexTablesException(
      s"$expression: '$column' is a partition column, which is not indexed. Filter it with =, " +
        "IN or a range instead.")

  def indexQueryWrongFieldKind(expression: String, column: String, kind: String, needed: String): IndexTablesException =
    new IndexTablesException(
      s"$expression: column '$column' is indexed as '$kind', but this operator needs a $needed " +
        "field. Use textsearch on text columns, fieldmatch on exact ones, or indexquery on any.")

  def indexQueryAllAmbiguous(expression: String, sources: Seq[String]): IndexTablesException =
    new IndexTablesException(
      s"$expression must apply to exactly one IndexTables table, but its filter reads " +
        s"${sources.size} relations (${sources.mkString("; ")}). Apply it in a subquery over " +
        "one table.")

  def indexQueryArguments(function: String, expected: Int, actual: Int): IndexTablesException =
    new IndexTablesException(s"$function takes $expected argument(s), got $actual.")

  def indexQueryNotLiteral(function: String, argument: String): IndexTablesException =
    new IndexTablesException(
      s"$function needs its query as a string literal, got $argument.")

  def indexQueryWithUntranslatable(predicate: String): IndexTablesException =
    new IndexTablesException(
      s"The predicate $predicate is combined with an IndexQuery under OR or NOT, but it cannot be " +
        "pushed into the index, and an IndexQuery cannot be evaluated by Spark. Move it to a " +
        "separate AND condition, or express it as an IndexQuery.")

  def indexQueryWithInexact(filter: String): IndexTablesException =
    new IndexTablesException(
      s"The filter $filter is combined with an IndexQuery under OR or NOT, but the index cannot " +
        "answer it exactly (tokenized text, partition columns and some types are not exact), " +
        "and an IndexQuery cannot be evaluated by Spark. Move it to a separate AND condition, " +
        "or express it as an IndexQuery.")

  def indexQueryLost(table: String): IndexTablesException =
    new IndexTablesException(
      s"The IndexQuery filter planned for table $table is no longer available (its plan was " +
        "discarded). Run the query again.")

  def indexQueryWithoutDocMapping(table: String): IndexTablesException =
    new IndexTablesException(
      s"Table $table records no doc mapping for its splits, so an IndexQuery cannot be parsed " +
        "for it. Rewrite the table with this version of IndexTables.")

  def indexQueryInUnsupportedExpression(expression: String): IndexTablesException =
    new IndexTablesException(
      s"An IndexQuery can be combined with other predicates by AND, OR and NOT only, not inside " +
        s"$expression.")

  // SQL commands

  def commandSyntaxError(sql: String, line: Int, position: Int, detail: String): IndexTablesException =
    new IndexTablesException(
      s"Syntax error in IndexTables command at line $line, position $position ($detail): $sql. " +
        "Expected CHECKPOINT INDEXTABLES or DESCRIBE INDEXTABLES STATE | TRANSACTION LOG | " +
        "HISTORY, followed by '<path>' or a table name.")

  def commandTargetNotIndexTables(name: String): IndexTablesException =
    new IndexTablesException(
      s"'$name' does not name an IndexTables table (a view over exactly one table read with " +
        "format('indextables')). Give the table path as a string instead.")

}

package io.indextables.spark

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.types.DataType

import io.indextables.spark.exceptions.{ConcurrentCommitException, IndexTablesException, TransactionLogException}

/**
 * Every user-facing error of the plugin, one factory method each, each with a stable error class
 * (`INDEXTABLES_*`) that callers and the Python package can match on. Messages name the table,
 * column, file, option or query at fault and say what to do.
 */
object IndexTablesErrors {

  private def error(errorClass: String, message: String, cause: Throwable = null)
      : IndexTablesException =
    new IndexTablesException(errorClass, message, cause)

  /** `a, b and c` (`word` "and") or `a, b or c`: items as a sentence names them. */
  private def spoken(items: Seq[String], word: String): String =
    if (items.size <= 1) items.mkString else s"${items.init.mkString(", ")} $word ${items.last}"

  private def logError(errorClass: String, message: String, cause: Throwable = null)
      : TransactionLogException =
    new TransactionLogException(errorClass, message, cause)

  // Options

  /** `key` holds `value`, which is not what the option takes (`expected` says what is). */
  def invalidOption(key: String, value: String, expected: String, cause: Throwable = null)
      : IndexTablesException =
    error(
      "INDEXTABLES_INVALID_OPTION",
      s"Invalid value '$value' for option '$key': expected $expected.",
      cause)

  /** `key`, an option of a write (or another `operation`), is no setting of IndexTables. */
  def unknownOption(operation: String, key: String, closeMatches: Seq[String])
      : IndexTablesException = {
    val hint =
      if (closeMatches.isEmpty) "No known option is close to it."
      else s"Did you mean ${closeMatches.mkString(", ")}?"
    error(
      "INDEXTABLES_UNKNOWN_OPTION",
      s"Unknown $operation option '$key': IndexTables has no such setting. $hint Set " +
        "spark.indextables.write.strictOptions=false to ignore unknown options."
    )
  }

  // Transaction log

  def versionNotFound(tablePath: Path, version: Long, file: String, latest: Option[Long])
      : TransactionLogException =
    logError(
      "INDEXTABLES_VERSION_NOT_FOUND",
      s"Version $version of table $tablePath does not exist ($file is missing); latest " +
        s"version is ${latest.map(_.toString).getOrElse("none")}."
    )

  def missingVersionFile(tablePath: Path, file: String, needed: Long): TransactionLogException =
    logError(
      "INDEXTABLES_LOG_INCOMPLETE",
      s"Transaction log of table $tablePath is incomplete: $file is missing but needed to " +
        s"reconstruct version $needed.")

  def unreadableVersionFile(file: Path, reason: String, cause: Throwable = null)
      : TransactionLogException =
    logError(
      "INDEXTABLES_LOG_FILE_UNREADABLE",
      s"Cannot read transaction log file $file: $reason",
      cause)

  /** The table (or `file` of its log) needs a newer reader than this build's `supported`. */
  def unsupportedReaderVersion(tablePath: Path, file: Option[Path], required: Int, supported: Int)
      : TransactionLogException =
    logError(
      "INDEXTABLES_UNSUPPORTED_PROTOCOL",
      s"Table $tablePath requires reader protocol version $required" +
        file.map(f => s" (in $f)").getOrElse("") + ", but this IndexTables supports reader " +
        s"versions up to $supported. Upgrade IndexTables to read it."
    )

  def unsupportedFeatures(tablePath: Path, side: String, features: Seq[String])
      : TransactionLogException =
    logError(
      "INDEXTABLES_UNSUPPORTED_FEATURE",
      s"Table $tablePath requires the $side feature(s) ${features.mkString(", ")}, which this " +
        s"IndexTables does not support. Upgrade IndexTables to ${if (side == "reader") "read"
          else "write to"} it."
    )

  def unsupportedWriterVersion(tablePath: Path, required: Int, supported: Int)
      : TransactionLogException =
    logError(
      "INDEXTABLES_UNSUPPORTED_PROTOCOL",
      s"Table $tablePath requires writer protocol version $required, but this IndexTables " +
        s"supports writer versions up to $supported. Upgrade IndexTables to write to it."
    )

  def versionRemoved(tablePath: Path, version: Long, earliest: Option[Long])
      : TransactionLogException =
    logError(
      "INDEXTABLES_VERSION_REMOVED",
      s"Version $version of table $tablePath can no longer be read: its version files were " +
        "removed by log retention and no checkpoint covers it; the earliest readable version " +
        s"is ${earliest.map(_.toString).getOrElse("unknown")}."
    )

  def splitPurged(tablePath: String, version: Long, latest: Long, file: String)
      : TransactionLogException =
    logError(
      "INDEXTABLES_SPLIT_PURGED",
      s"Version $version of table $tablePath can no longer be read: its file $file was " +
        s"deleted by PURGE, because version $latest no longer references it and it was removed " +
        "longer ago than the purge retention. Read a later version, or purge with a longer " +
        "retention (OLDER THAN) to keep older versions readable."
    )

  def timestampBeforeTable(tablePath: Path, timestamp: String, earliest: Long)
      : TransactionLogException =
    logError(
      "INDEXTABLES_TIMESTAMP_BEFORE_TABLE",
      s"Timestamp $timestamp is before the earliest readable version ($earliest) of table " +
        s"$tablePath; use a later timestamp or versionAsOf."
    )

  def missingProtocolOrMetadata(tablePath: Path, version: Long, what: String)
      : TransactionLogException =
    logError(
      "INDEXTABLES_LOG_CORRUPT",
      s"Table $tablePath has no $what action in versions 0..$version; the log is corrupt.")

  def invalidCommit(tablePath: Path, operation: String, reason: String): TransactionLogException =
    logError(
      "INDEXTABLES_INVALID_COMMIT",
      s"Cannot commit '$operation' to table $tablePath: $reason")

  def tooManyConflicts(tablePath: Path, operation: String, attempts: Int)
      : ConcurrentCommitException =
    new ConcurrentCommitException(
      s"Gave up committing '$operation' to table $tablePath after $attempts attempts: other " +
        "writers committed first every time. Retry the operation, or raise " +
        "spark.indextables.transaction.retry.maxAttempts.")

  /**
   * A log action (a line of a version file, or the metadata of a checkpoint) that does not follow
   * the protocol; `reason` names the action, field or text at fault. Readers wrap it in
   * [[unreadableVersionFile]], which names the file.
   */
  def malformedAction(reason: String, cause: Throwable = null): TransactionLogException =
    logError("INDEXTABLES_LOG_MALFORMED_ACTION", reason, cause)

  /** A `_last_checkpoint` pointer that does not parse; `reason` names the field at fault. */
  def malformedCheckpointPointer(reason: String): TransactionLogException =
    logError("INDEXTABLES_LOG_MALFORMED_CHECKPOINT_POINTER", s"_last_checkpoint: $reason")

  /**
   * An Avro state file (manifest or entries) that does not decode; `reason` names the block,
   * field or record at fault. Readers wrap it in [[unreadableVersionFile]], naming the file.
   */
  def malformedStateFile(reason: String): TransactionLogException =
    logError("INDEXTABLES_LOG_MALFORMED_STATE", reason)

  /** Every random name tried for a new state manifest under `logPath` was already taken. */
  def stateNameTaken(logPath: Path, attempts: Int): TransactionLogException =
    logError(
      "INDEXTABLES_STATE_NAME_TAKEN",
      s"Could not find a free manifest name under $logPath in $attempts attempts: another " +
        "writer took each one. Retry the operation."
    )

  // Reads and writes

  def bothTimeTravelOptions(): IndexTablesException =
    error(
      "INDEXTABLES_TIME_TRAVEL_CONFLICT",
      "Give either versionAsOf or timestampAsOf to read an earlier version, not both.")

  /** Nothing has been committed at `tablePath`: it holds no IndexTables table. */
  def tableNotFound(tablePath: String): TransactionLogException =
    logError(
      "INDEXTABLES_TABLE_NOT_FOUND",
      s"'$tablePath' is not an IndexTables table: it has no " +
        "_transaction_log/00000000000000000000.json. Write a DataFrame to it with " +
        "format('indextables') first, or check the path."
    )

  def pathRequired(): IndexTablesException =
    error(
      "INDEXTABLES_PATH_REQUIRED",
      "IndexTables needs a table path: use .load(path) or .save(path).")

  def unsupportedType(column: String, dataType: DataType): IndexTablesException =
    error(
      "INDEXTABLES_UNSUPPORTED_TYPE",
      s"Column '$column' has type ${dataType.simpleString}, which IndexTables cannot index. " +
        "Supported: string, long, int, double, float, boolean, date, timestamp, decimal (up to " +
        "precision 15), binary, and struct, array and map (string keys) of these; smallint and " +
        "tinyint as columns of their own (not inside a struct, array or map). Cast the column " +
        "or drop it before writing."
    )

  /**
   * `column`'s name takes `bytes` bytes in UTF-8, more than a document batch can carry for a
   * field name (65,535).
   */
  def columnNameTooLong(column: String, bytes: Int): IndexTablesException =
    error(
      "INDEXTABLES_COLUMN_NAME_TOO_LONG",
      s"Column '${column.take(64)}...' has a name of $bytes bytes in UTF-8; IndexTables " +
        "indexes columns whose names are at most 65535 bytes. Rename the column before writing."
    )

  def unsupportedPartitioning(transform: String): IndexTablesException =
    error(
      "INDEXTABLES_UNSUPPORTED_PARTITIONING",
      s"IndexTables partitions by columns only (identity transforms), not $transform.")

  def unsupportedPartitionType(column: String, dataType: DataType): IndexTablesException =
    error(
      "INDEXTABLES_UNSUPPORTED_PARTITION_TYPE",
      s"Partition column '$column' has type ${dataType.simpleString}; partition columns must be " +
        "string, tinyint, smallint, int, long, boolean, double, date or timestamp."
    )

  def unknownIndexType(column: String, value: String): IndexTablesException =
    error(
      "INDEXTABLES_INVALID_TYPEMAP",
      s"Unknown index type '$value' for column '$column' in spark.indextables.indexing.typemap." +
        s"$column: use string, text, json or ip."
    )

  def indexTypeNeedsString(
      column: String,
      indexType: String,
      dataType: DataType): IndexTablesException =
    error(
      "INDEXTABLES_INVALID_TYPEMAP",
      s"Column '$column' is of type ${dataType.simpleString}; index type '$indexType' applies to " +
        "string columns only.")

  def indexingOptionForMissingColumn(key: String, column: String): IndexTablesException =
    error(
      "INDEXTABLES_INVALID_TYPEMAP",
      s"$key names column '$column', which the data does not have.")

  def partitionColumnMissing(column: String): IndexTablesException =
    error(
      "INDEXTABLES_PARTITION_COLUMN_MISSING",
      s"Partition column '$column' is not a column of the data.")

  def indexingOnPartitionColumn(key: String, column: String): IndexTablesException =
    error(
      "INDEXTABLES_INVALID_TYPEMAP",
      s"$key applies to partition column '$column'; partition values live in directory names " +
        "and the log, not in the index. Remove the option."
    )

  /** An indexing option the index cannot honour, with why. */
  def invalidIndexing(key: String, why: String): IndexTablesException =
    error("INDEXTABLES_INVALID_TYPEMAP", s"Invalid indexing option $key: $why.")

  /** A split's doc mapping that does not describe the table's columns. */
  def invalidDocMapping(why: String, cause: Throwable = null): IndexTablesException =
    error("INDEXTABLES_INVALID_DOC_MAPPING", s"A split's doc mapping cannot be read: $why.", cause)

  def invalidIpAddress(column: String, value: String, canonical: Option[String])
      : IndexTablesException = {
    val why = canonical match {
      case Some(c) => s"write it as '$c', the one form the index gives back"
      case None => "it is not an IPv4 or IPv6 address"
    }
    error(
      "INDEXTABLES_INVALID_IP",
      s"Column '$column' is indexed as ip, and '$value' cannot be written to it: $why.")
  }

  def filterOnIndexOnlyColumn(filter: String, column: String): IndexTablesException =
    error(
      "INDEXTABLES_INDEX_ONLY_FILTER",
      s"The filter $filter needs the values of column '$column', which the table indexes but " +
        "does not store (spark.indextables.indexing.indexonlyfields), and the index cannot " +
        "answer it exactly. Filter that column with conditions the index answers (=, IN, " +
        "ranges on fast fields, IS NULL) or with indexquery."
    )

  def decimalTooPrecise(column: String, dataType: DataType): IndexTablesException =
    error(
      "INDEXTABLES_UNSUPPORTED_TYPE",
      s"Column '$column' has type ${dataType.simpleString}: IndexTables indexes decimals as " +
        "doubles, which hold 15 significant digits exactly, and would round larger ones. Cast " +
        "it to decimal(15, s) or less, or to string, before writing."
    )

  def typemapChanged(
      table: String,
      column: String,
      was: String,
      now: String): IndexTablesException =
    error(
      "INDEXTABLES_TYPEMAP_CHANGED",
      s"Table $table indexes column '$column' as '$was'; a write cannot change it to '$now'. " +
        "Overwrite the table to change how it is indexed."
    )

  def columnMissingFromData(table: String, column: String, schema: DataType)
      : IndexTablesException =
    error(
      "INDEXTABLES_SCHEMA_MISMATCH",
      s"Cannot write to table $table: the data has no column '$column' (the table's schema is " +
        s"${schema.simpleString}). Columns cannot be dropped; add it as null, or overwrite the " +
        "table."
    )

  def columnTypeChanged(table: String, column: String, was: DataType, now: DataType)
      : IndexTablesException =
    error(
      "INDEXTABLES_SCHEMA_MISMATCH",
      s"Cannot write to table $table: column '$column' is ${was.simpleString} in the table and " +
        s"${now.simpleString} in the data. Cast it to ${was.simpleString}, or overwrite the table " +
        "to change its type."
    )

  def newColumnsWithoutMergeSchema(table: String, columns: Seq[String]): IndexTablesException =
    error(
      "INDEXTABLES_SCHEMA_MISMATCH",
      s"Cannot write to table $table: the data has columns the table does not " +
        s"(${columns.mkString(", ")}). Set the option mergeSchema to true (or " +
        "spark.indextables.write.mergeSchema) to add them, or overwrite the table."
    )

  def schemaChangedConcurrently(table: String): IndexTablesException =
    error(
      "INDEXTABLES_CONCURRENT_SCHEMA_CHANGE",
      s"Table $table's schema changed while this write ran; nothing was committed. Retry the " +
        "write."
    )

  def invalidReplaceWhere(table: String, predicate: String, why: String): IndexTablesException =
    error(
      "INDEXTABLES_INVALID_REPLACE_WHERE",
      s"Cannot overwrite table $table where $predicate: $why. Nothing was written.")

  def replaceWhereViolation(table: String, predicate: String, row: String)
      : IndexTablesException =
    error(
      "INDEXTABLES_REPLACE_WHERE_VIOLATION",
      s"A row written to table $table with replaceWhere does not satisfy the predicate " +
        s"$predicate: $row. Every written row must match it; nothing was committed."
    )

  def replaceWhereWithDynamicOverwrite(table: String): IndexTablesException =
    error(
      "INDEXTABLES_INVALID_OPTION",
      s"Cannot write table $table with both replaceWhere and partitionOverwriteMode=dynamic: " +
        "they overwrite different rows. Give one of them."
    )

  def overwriteConflict(table: String, what: String, detail: String): IndexTablesException =
    error(
      "INDEXTABLES_CONCURRENT_COMMIT",
      s"Cannot commit the $what of table $table: another writer changed the rows it " +
        s"replaces since the write began ($detail). Nothing was committed; run the write again."
    )

  /**
   * A DELETE, UPDATE or MERGE read split `split` of `table`, and another commit changed it since
   * (`what`: removed it, or deleted rows from it).
   */
  def rowLevelConflict(table: String, operation: String, split: String, what: String)
      : IndexTablesException =
    error(
      "INDEXTABLES_CONCURRENT_COMMIT",
      s"Cannot commit the $operation of table $table: another writer $what split $split after " +
        s"the $operation read it. Nothing was committed, and no row was changed; run the " +
        s"$operation again."
    )

  def partitioningMismatch(
      table: String,
      expected: Seq[String],
      actual: Seq[String]): IndexTablesException =
    error(
      "INDEXTABLES_PARTITIONING_MISMATCH",
      s"Table $table is partitioned by [${expected.mkString(", ")}], but the write asks for " +
        s"[${actual.mkString(", ")}]."
    )

  def tableExists(path: String): IndexTablesException =
    error(
      "INDEXTABLES_TABLE_EXISTS",
      s"Table $path already exists (save mode ErrorIfExists). Use mode('append') or " +
        "mode('overwrite').")

  /** The native search of a readable split failed, e.g. for a query the field cannot serve. */
  def searchFailed(splitPath: String, query: String, cause: Throwable): IndexTablesException =
    error(
      "INDEXTABLES_SEARCH_FAILED",
      s"Search of split $splitPath failed for query $query: " +
        s"${Option(cause.getMessage).getOrElse(cause.toString)}",
      cause)

  /** The JAR was built without the native ranker (`rank/`), which `_score` needs. */
  def nativeRankerMissing(resource: String): IndexTablesException =
    error(
      "INDEXTABLES_NATIVE_RANKER_MISSING",
      s"The native ranker is missing: this IndexTables JAR was built without it (no resource " +
        s"$resource; it is built for linux-x86_64 only). Rebuild the JAR with cargo installed " +
        "(build/package.sh), or query without _score."
    )

  /** The native ranker failed on a split (`step`: extracting it, opening it, or a query). */
  def rankingFailed(splitPath: String, step: String, cause: Throwable): IndexTablesException =
    error(
      "INDEXTABLES_RANKING_FAILED",
      s"Ranking split $splitPath by _score failed ($step): " +
        s"${Option(cause.getMessage).getOrElse(cause.toString)}",
      cause)

  def companionIndexFailed(parquetPath: String, cause: Throwable): IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_INDEX_FAILED",
      s"Cannot index the Parquet file $parquetPath into a companion split: " +
        Option(cause.getMessage).getOrElse(cause.toString),
      cause
    )

  def companionIndexOnlyColumn(table: String, column: String): IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_INDEX_ONLY",
      s"Table $table has the companion layout, whose index is built from its Parquet files, so " +
        s"column '$column' cannot be indexed without being stored: leave it out of " +
        "spark.indextables.indexing.indexonlyfields, or use the splits layout."
    )

  def companionIpUnsupported(table: String, column: String): IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_IP_UNSUPPORTED",
      s"Table $table has the companion layout, which cannot yet index column '$column' as an " +
        "IP address (tantivy4java 0.31.0's companion address fields answer equality filters " +
        "wrongly): index it as a string, or use the splits layout."
    )

  def streamingOutputModeUnsupported(table: String, mode: String): IndexTablesException =
    error(
      "INDEXTABLES_STREAMING_OUTPUT_MODE",
      s"A streaming query cannot write to table $table in the $mode output mode: IndexTables " +
        "sinks take the append mode (each batch adds its rows) and the complete mode (each " +
        "batch replaces the table). Use outputMode('append'), or 'complete' for an aggregation."
    )

  /**
   * A stream reading table `tablePath`'s new rows reached `version`, which removed or rewrote
   * rows (its `operation`, when its commit record names it): a stream of appended rows cannot
   * say so.
   */
  def streamingSourceDataChanged(tablePath: String, version: Long, operation: Option[String])
      : IndexTablesException =
    error(
      "INDEXTABLES_STREAMING_SOURCE_DATA_CHANGED",
      s"Version $version of table $tablePath removed or rewrote rows" +
        operation.fold("")(o => s" ($o)") + ", which a stream of the table's new rows cannot " +
        "emit. Set the read option skipChangeCommits=true to ignore such versions (their new " +
        "rows too, as Delta does), or restart the stream with a new checkpoint and " +
        s"startingVersion=${version + 1} (or latest)."
    )

  /**
   * A stream reading table `tablePath`'s new rows reached `version`, which holds `columns` the
   * stream does not (added, or retyped, since it started).
   */
  def streamingSourceSchemaChanged(tablePath: String, version: Long, columns: Seq[String])
      : IndexTablesException =
    error(
      "INDEXTABLES_STREAMING_SOURCE_SCHEMA_CHANGED",
      s"Version $version of table $tablePath has columns the stream did not have when it " +
        s"started (added or retyped: ${columns.mkString(", ")}), which its rows would lose. " +
        "Restart the query from its checkpoint: it reads on with the table's columns."
    )

  /**
   * The offset a stream of table `tablePath` was given (from its checkpoint) is not one of this
   * table's: `reason` says why.
   */
  def streamingSourceOffset(tablePath: String, offset: String, reason: String)
      : IndexTablesException =
    error(
      "INDEXTABLES_STREAMING_SOURCE_OFFSET",
      s"The streaming offset $offset of table $tablePath cannot be used: $reason. A stream's " +
        "checkpoint belongs to the table it read: start the stream with a new " +
        "checkpointLocation."
    )

  def layoutMismatch(table: String, tableLayout: String, asked: String): IndexTablesException =
    error(
      "INDEXTABLES_LAYOUT_MISMATCH",
      s"Table $table has the $tableLayout layout, but the write asks for " +
        s"spark.indextables.write.layout=$asked. A table's layout is chosen when it is " +
        "created: write without the option, or into a new table."
    )

  def companionFileUnreadable(file: String, split: String, cause: Throwable)
      : IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_FILE_UNREADABLE",
      s"Cannot read the Parquet file $file that holds the rows of split $split: " +
        Option(cause.getMessage).getOrElse(cause.toString) +
        ". The file is missing or was changed; the table's log still lists it.",
      cause
    )

  def companionFileChanged(file: String, split: String, recorded: Long, found: Long)
      : IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_FILE_CHANGED",
      s"The Parquet file $file that holds the rows of split $split was changed after it was " +
        s"indexed: it was $recorded bytes, it is $found bytes now. Its rows are not read, " +
        "because the index no longer describes them; restore the file, or rebuild the index " +
        "(BUILD INDEXTABLES COMPANION re-indexes a changed source file)."
    )

  def companionFilesScattered(split: String, files: Seq[String]): IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_FILES_SCATTERED",
      s"The companion split $split indexes Parquet files in more than one directory " +
        s"(${files.mkString(", ")}), but its index names each split's files under their one " +
        "directory: the split cannot be read. Rebuild the index at a new location."
    )

  def splitReadFailed(splitPath: String, cause: Throwable): IndexTablesException =
    error(
      "INDEXTABLES_SPLIT_UNREADABLE",
      s"Cannot read split file $splitPath: ${Option(cause.getMessage).getOrElse(cause.toString)}. " +
        "The file is missing or corrupt; the table's log still lists it.",
      cause
    )

  /**
   * The deletion vector `file` of split `split` cannot be used: it is missing, damaged, or not
   * what the log says it is (`reason`). Its rows are not served: the deleted ones would return.
   */
  def deletionVectorUnreadable(file: String, split: String, reason: String, cause: Throwable = null)
      : IndexTablesException =
    error(
      "INDEXTABLES_DELETION_VECTOR_UNREADABLE",
      s"Cannot read the deletion vector $file of split $split: $reason. The split's rows are " +
        "not read, because rows deleted from it would be served again; restore the file, or " +
        "read a version of the table from before the vector was written.",
      cause
    )

  /**
   * A split with a deletion vector holds more than one segment: the vector's doc ids name the
   * docs of one segment, so the split's rows cannot be told apart from the deleted ones.
   */
  def splitNotSingleSegment(split: String): IndexTablesException =
    error(
      "INDEXTABLES_SPLIT_NOT_SINGLE_SEGMENT",
      s"Split $split has a deletion vector but holds more than one segment, so its deleted rows " +
        "cannot be found. The split was not written by IndexTables' writers, which make one " +
        "segment per split; rewrite its partition (an overwrite of it) to read it again."
    )

  def storageContainerMissing(kind: String, name: String, path: String): IndexTablesException =
    error(
      "INDEXTABLES_STORAGE_NOT_FOUND",
      s"$kind '$name' of $path does not exist. Create it first, or check the table path.")

  /**
   * The store refused or failed a request on `path`. `detail` is the service's own message,
   * which names no secret; the settings that were used are never part of the message.
   */
  def storageRequestFailed(
      path: String,
      status: Int,
      detail: String,
      cause: Throwable): IndexTablesException = {
    val hint =
      if (status == 401 || status == 403)
        " The credentials were refused: check spark.indextables.aws.* / spark.indextables.azure.* " +
          "(or the Hadoop and SDK settings they fall back to)."
      else ""
    error(
      "INDEXTABLES_STORAGE_REQUEST_FAILED",
      s"Request on $path failed with status $status: $detail.$hint",
      cause)
  }

  def splitMissing(splitPath: String): IndexTablesException =
    error(
      "INDEXTABLES_SPLIT_MISSING",
      s"Split file $splitPath listed in the transaction log does not exist. It was deleted " +
        "outside IndexTables; restore it or overwrite the table."
    )

  def writeFailed(what: String, cause: Throwable): IndexTablesException =
    error("INDEXTABLES_WRITE_FAILED", s"Writing $what failed: ${cause.getMessage}", cause)

  /** `path` does not have the form its scheme's store needs (`expected`). */
  def invalidStoragePath(path: String, expected: String): IndexTablesException =
    error("INDEXTABLES_INVALID_STORAGE_PATH", s"$path is not a valid path: expected $expected.")

  /** One half of a key pair was set without the other; names the keys, never their values. */
  def incompleteCredentials(present: String, missing: String): IndexTablesException =
    error(
      "INDEXTABLES_INCOMPLETE_CREDENTIALS",
      s"$present is set but $missing is not: credentials need both. Set $missing, or unset " +
        s"$present.")

  /** The tantivy4java on the classpath lacks what IndexTables calls (`what`). */
  def nativeLibraryMismatch(what: String): IndexTablesException =
    error(
      "INDEXTABLES_NATIVE_LIBRARY_MISMATCH",
      s"The tantivy4java library on the classpath is not the one IndexTables needs: $what.")

  /** tantivy4java returned data IndexTables cannot decode (`what` names the value at fault). */
  def nativeDataUnexpected(what: String): IndexTablesException =
    error(
      "INDEXTABLES_NATIVE_DATA_UNEXPECTED",
      s"tantivy4java returned data IndexTables cannot read: $what.")

  /**
   * A companion index over a table of `format` (Iceberg) on a Spark line where IndexTables does
   * not reach that library (Iceberg has no runtime for Spark 4.2).
   */
  def companionSourceUnsupportedSpark(format: String, running: String, served: Seq[String])
      : IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_SOURCE_UNSUPPORTED_SPARK",
      s"A companion index over a $format table is served on Spark " +
        s"${spoken(served.map(_ + ".x"), "and")} only, and this is Spark $running. Build and " +
        s"read it on Spark ${spoken(served, "or")}, or build the companion over the table's " +
        "Parquet directory instead."
    )

  /**
   * A broken invariant of IndexTables itself (`what` names the value at fault): a bug, not a
   * problem of the table or the query. Its SQLSTATE is XX000, as Spark's internal errors.
   */
  def internalError(what: String): IndexTablesException =
    error(
      IndexTablesException.InternalError,
      s"$what. This is a bug in IndexTables; please report it with the query that raised it.")

  // IndexQuery (indexquery / indexqueryall / textsearch / fieldmatch)

  def invalidIndexQuery(query: String, reason: String): IndexTablesException =
    error(
      "INDEXTABLES_INVALID_INDEXQUERY",
      s"Invalid IndexQuery '$query': $reason. Use tantivy query syntax, e.g. 'timeout OR " +
        "connection', 'level:ERROR AND \"connection reset\"' or 'latency:[100 TO 200]'."
    )

  def indexQueryOnStream(expression: String, under: String): IndexTablesException =
    error(
      "INDEXTABLES_INDEXQUERY_ON_STREAM",
      s"$expression filters a stream of an IndexTables table through $under. On a stream, " +
        "indexquery must filter the stream's own rows: put it in a WHERE directly over " +
        "readStream (or a temporary view of it), before any aggregate, join or other operator."
    )

  def indexQueryNotPushed(expression: String): IndexTablesException =
    error(
      "INDEXTABLES_INDEXQUERY_NOT_PUSHED",
      s"$expression could not be pushed into an IndexTables scan, and Spark cannot evaluate it row " +
        "by row. Use it in the WHERE clause of a query over one IndexTables table, combined with " +
        "AND, OR and NOT only with predicates on that same table."
    )

  /**
   * An aggregate over `table` that Spark must compute from the rows, while the read requires
   * pushdown; `aggregate` is Spark's rendering of it.
   */
  def aggregateNotPushed(table: String, aggregate: String): IndexTablesException =
    error(
      "INDEXTABLES_AGGREGATE_NOT_PUSHED",
      s"The aggregate $aggregate over IndexTables table $table cannot be answered exactly by its " +
        "splits or its log (a filter Spark must re-check, a column that is not fast or stored, " +
        "an aggregate function or GROUP BY the index cannot compute exactly, or a SUM that " +
        "could lose precision), and spark.indextables.read.requireAggregatePushdown is true. " +
        "Set it to false to let Spark aggregate the rows, or change the query."
    )

  def indexQueryOutsideFilter(expression: String, node: String): IndexTablesException =
    error(
      "INDEXTABLES_INDEXQUERY_OUTSIDE_FILTER",
      s"$expression is only supported in a WHERE (or HAVING) condition, not in $node.")

  def indexQueryNeedsColumn(expression: String, what: String): IndexTablesException =
    error(
      "INDEXTABLES_INDEXQUERY_NEEDS_COLUMN",
      s"$expression: '$what' is not a column of an IndexTables table. The left side of " +
        "indexquery must be a plain column, read from an IndexTables table."
    )

  def indexQueryNotOnIndexTables(expression: String, source: String): IndexTablesException =
    error(
      "INDEXTABLES_INDEXQUERY_NOT_INDEXTABLES",
      s"$expression applies to $source, which is not an IndexTables table. indexquery works " +
        "only on tables read with format('indextables')."
    )

  def indexQueryOnPartitionColumn(expression: String, column: String): IndexTablesException =
    error(
      "INDEXTABLES_INDEXQUERY_ON_PARTITION_COLUMN",
      s"$expression: '$column' is a partition column, which is not indexed. Filter it with =, " +
        "IN or a range instead."
    )

  def indexQueryWrongFieldKind(
      expression: String,
      column: String,
      kind: String,
      needed: String): IndexTablesException =
    error(
      "INDEXTABLES_INDEXQUERY_WRONG_FIELD_KIND",
      s"$expression: column '$column' is indexed as '$kind', but this operator needs a $needed " +
        "field. Use textsearch on text columns, fieldmatch on exact ones, or indexquery on any."
    )

  def indexQueryAllAmbiguous(expression: String, sources: Seq[String]): IndexTablesException =
    error(
      "INDEXTABLES_INDEXQUERY_AMBIGUOUS",
      s"$expression must apply to exactly one IndexTables table, but its filter reads " +
        s"${sources.size} relations (${sources.mkString("; ")}). Apply it in a subquery over " +
        "one table."
    )

  def indexQueryArguments(function: String, expected: Int, actual: Int): IndexTablesException =
    error(
      "INDEXTABLES_INDEXQUERY_ARGUMENTS",
      s"$function takes $expected argument(s), got $actual.")

  /** A bucket function (indextables_histogram, ...) called with arguments it cannot take. */
  def bucketFunctionArguments(function: String, problem: String): IndexTablesException =
    error("INDEXTABLES_BUCKET_FUNCTION_ARGUMENTS", s"$function: $problem.")

  /** `indextables_snippet` called with arguments it cannot take (`problem` names the one). */
  def snippetArguments(problem: String): IndexTablesException =
    error(
      "INDEXTABLES_SNIPPET_ARGUMENTS",
      s"indextables_snippet: $problem. It takes (column, 'query'[, 'pre_tag', 'post_tag'[, " +
        "max_chars[, 'encoder']]]), every argument after the column a literal."
    )

  /** `indextables_snippet` over `column`, whose type `dataType` is not a string. */
  def snippetNotString(column: String, dataType: DataType): IndexTablesException =
    error(
      "INDEXTABLES_SNIPPET_NOT_STRING",
      s"indextables_snippet highlights a string column, but $column is of type " +
        s"${dataType.sql}. Highlight a string (or text) column."
    )

  def indexQueryNotLiteral(function: String, argument: String): IndexTablesException =
    error(
      "INDEXTABLES_INDEXQUERY_NOT_LITERAL",
      s"$function needs its query as a string literal, got $argument.")

  def indexQueryWithUntranslatable(predicate: String): IndexTablesException =
    error(
      "INDEXTABLES_INDEXQUERY_UNTRANSLATABLE",
      s"The predicate $predicate is combined with an IndexQuery under OR or NOT, but it cannot be " +
        "pushed into the index, and an IndexQuery cannot be evaluated by Spark. Move it to a " +
        "separate AND condition, or express it as an IndexQuery."
    )

  def indexQueryWithInexact(filter: String): IndexTablesException =
    error(
      "INDEXTABLES_INDEXQUERY_INEXACT",
      s"The filter $filter is combined with an IndexQuery under OR or NOT, but the index cannot " +
        "answer it exactly (tokenized text, partition columns and some types are not exact), " +
        "and an IndexQuery cannot be evaluated by Spark. Move it to a separate AND condition, " +
        "or express it as an IndexQuery."
    )

  def indexQueryLost(table: String): IndexTablesException =
    error(
      "INDEXTABLES_INDEXQUERY_LOST",
      s"The IndexQuery filter planned for table $table is no longer available (its plan was " +
        "discarded). Run the query again."
    )

  def indexQueryWithoutDocMapping(table: String): IndexTablesException =
    error(
      "INDEXTABLES_INDEXQUERY_NO_DOC_MAPPING",
      s"Table $table records no doc mapping for its splits, so an IndexQuery cannot be parsed " +
        "for it. Rewrite the table with this version of IndexTables."
    )

  def indexQueryInUnsupportedExpression(expression: String): IndexTablesException =
    error(
      "INDEXTABLES_INDEXQUERY_UNSUPPORTED_EXPRESSION",
      s"An IndexQuery can be combined with other predicates by AND, OR and NOT only, not inside " +
        s"$expression."
    )

  // SQL commands

  def commandSyntaxError(
      sql: String,
      line: Int,
      position: Int,
      detail: String): IndexTablesException =
    error(
      "INDEXTABLES_COMMAND_SYNTAX_ERROR",
      s"Syntax error in IndexTables command at line $line, position $position ($detail): $sql. " +
        "The commands and their grammar are listed in the README (SQL commands)."
    )

  def commandTargetNotIndexTables(name: String): IndexTablesException =
    error(
      "INDEXTABLES_COMMAND_TARGET",
      s"'$name' does not name an IndexTables table (a view over exactly one table read with " +
        "format('indextables')). Give the table path as a string instead."
    )

  def partitionPredicateRequired(
      command: String,
      predicate: String,
      partitionColumns: Seq[String]): IndexTablesException =
    error(
      "INDEXTABLES_PARTITION_PREDICATE",
      s"$command: the WHERE clause '$predicate' may name partition columns only; the table's " +
        s"partition columns are " +
        (if (partitionColumns.isEmpty) "none (it is not partitioned)"
         else partitionColumns.mkString("[", ", ", "]")) + "."
    )

  def invalidPartitionPredicate(command: String, predicate: String, why: String)
      : IndexTablesException =
    error(
      "INDEXTABLES_INVALID_PARTITION_PREDICATE",
      s"$command: the WHERE clause '$predicate' cannot be used: $why."
    )

  def unknownIndexComponent(name: String, known: Seq[String]): IndexTablesException =
    error(
      "INDEXTABLES_UNKNOWN_INDEX_COMPONENT",
      s"PREWARM: '$name' is not an index component; use one of ${known.mkString(", ")}."
    )

  def prewarmUnknownField(field: String, columns: Seq[String]): IndexTablesException =
    error(
      "INDEXTABLES_UNKNOWN_FIELD",
      s"PREWARM: the table has no column '$field'; its columns are ${columns.mkString(", ")}."
    )

  // MERGE SPLITS

  /** A MERGE SPLITS clause (`TARGET SIZE`, `MAX DEST SPLITS`, ...) holds an invalid value. */
  def invalidMergeOption(clause: String, value: String, expected: String)
      : IndexTablesException =
    error(
      "INDEXTABLES_INVALID_MERGE_OPTION",
      s"Invalid $clause '$value' in MERGE SPLITS: expected $expected. Nothing was merged.")

  /** The WHERE clause of MERGE SPLITS names `column`, which is not a partition column. */
  def mergeWhereNotOnPartitions(
      table: String,
      predicate: String,
      column: String,
      partitionColumns: Seq[String]): IndexTablesException =
    error(
      "INDEXTABLES_MERGE_WHERE_NOT_PARTITION",
      s"Cannot merge the splits of table $table where $predicate: '$column' is not a " +
        "partition column; the WHERE clause of MERGE SPLITS may name only partition columns (" +
        (if (partitionColumns.isEmpty) "the table has none" else partitionColumns.mkString(", ")) +
        "). Nothing was merged."
    )

  def invalidMergeWhere(table: String, predicate: String, why: String): IndexTablesException =
    error(
      "INDEXTABLES_INVALID_MERGE_WHERE",
      s"Cannot merge the splits of table $table where $predicate: $why. Nothing was merged.")

  // Catalog

  /** A table name that names no table (the path form is [[tableNotFound]]). */
  def noSuchTable(name: String): IndexTablesException =
    error(
      "INDEXTABLES_TABLE_NOT_FOUND",
      s"Table '$name' does not exist: no table or view of that name is in the catalog. " +
        "Check SHOW TABLES, or create it with CREATE TABLE ... USING indextables."
    )

  /** CREATE TABLE gave a schema other than that of the table already at the location. */
  def catalogSchemaMismatch(
      name: String,
      path: String,
      requested: DataType,
      existing: DataType): IndexTablesException =
    error(
      "INDEXTABLES_CATALOG_SCHEMA_MISMATCH",
      s"Cannot create table '$name': the IndexTables table at '$path' has the schema " +
        s"${existing.simpleString}, not the given ${requested.simpleString}. Leave out the " +
        "columns to register the table as it is."
    )

  /** CREATE TABLE without columns at a location that holds no table. */
  def catalogSchemaRequired(name: String, path: String): IndexTablesException =
    error(
      "INDEXTABLES_CATALOG_SCHEMA_REQUIRED",
      s"Cannot create table '$name': it names no columns and '$path' holds no IndexTables " +
        "table to take them from. Give the columns, or use CREATE TABLE ... AS SELECT."
    )

  /** CREATE TABLE or CTAS onto a location that holds a table it would overwrite. */
  def catalogLocationHasTable(name: String, path: String): IndexTablesException =
    error(
      "INDEXTABLES_CATALOG_LOCATION_EXISTS",
      s"Cannot create table '$name': '$path' already holds an IndexTables table. Register it " +
        "with CREATE TABLE ... USING indextables LOCATION '<path>' (no columns, no AS SELECT), " +
        "or use REPLACE TABLE."
    )

  /** REPLACE TABLE naming a location other than the table's. */
  def replaceTableLocation(
      name: String,
      existing: String,
      requested: String): IndexTablesException =
    error(
      "INDEXTABLES_REPLACE_LOCATION",
      s"REPLACE TABLE '$name' cannot move the table from '$existing' to '$requested': leave out " +
        "LOCATION, or drop the table and create it at the new location."
    )

  /** An ALTER TABLE the catalog does not apply to IndexTables tables. */
  def unsupportedTableChange(name: String, change: String): IndexTablesException =
    error(
      "INDEXTABLES_UNSUPPORTED_TABLE_CHANGE",
      s"ALTER TABLE '$name': $change is not supported on IndexTables tables. SET and UNSET " +
        "TBLPROPERTIES are; new columns come with an append given mergeSchema."
    )

  /** ALTER TABLE setting or removing how columns are indexed. */
  def indexingPropertyAltered(name: String, key: String): IndexTablesException =
    error(
      "INDEXTABLES_INDEXING_PROPERTY_ALTERED",
      s"ALTER TABLE '$name' cannot change '$key': how a table indexes its columns is set when " +
        "it is created or replaced (CREATE/REPLACE TABLE ... TBLPROPERTIES, or a whole-table " +
        "overwrite with the option)."
    )

  /** A storage setting given as a table property: such settings are never recorded. */
  def storagePropertyInTable(name: String, key: String): IndexTablesException =
    error(
      "INDEXTABLES_STORAGE_PROPERTY_IN_TABLE",
      s"Table '$name' cannot record '$key' as a table property: storage settings and " +
        "credentials are never stored in a table or the catalog. Set it in the session " +
        "configuration (spark.conf.set) instead."
    )

  // Paths and maintenance commands

  /** A path taken from the log (`action`'s) resolves outside the table root. */
  def pathOutsideTable(tableRoot: Path, action: String, path: String, why: String)
      : TransactionLogException =
    logError(
      "INDEXTABLES_PATH_OUTSIDE_TABLE",
      s"The log of $tableRoot holds a $action action whose path '$path' lies outside the " +
        s"table ($why). Split paths are relative to the table root; nothing is read or " +
        "deleted outside it. The log is corrupt or was crafted: repair it with REPAIR " +
        "INDEXFILES TRANSACTION LOG."
    )

  /** A PURGE retention below the minimum, with the safety check on. */
  def purgeRetentionTooShort(what: String, hours: Long, minimum: Long): IndexTablesException =
    error(
      "INDEXTABLES_PURGE_RETENTION_TOO_SHORT",
      s"PURGE $what of $hours hours is below the minimum of $minimum hours: files of writes " +
        "still in flight could be deleted. Give a longer retention, or set " +
        "spark.indextables.purge.retentionCheckEnabled=false if no write can be running."
    )

  /** DROP PARTITIONS with a predicate it cannot use. */
  def invalidDropPartitions(table: String, predicate: String, why: String)
      : IndexTablesException =
    error(
      "INDEXTABLES_INVALID_DROP_PARTITIONS",
      s"DROP INDEXTABLES PARTITIONS FROM $table WHERE $predicate: $why."
    )

  /** REPAIR INDEXFILES with a source or target it cannot use. */
  def invalidRepair(source: String, target: String, why: String): IndexTablesException =
    error(
      "INDEXTABLES_INVALID_REPAIR",
      s"REPAIR INDEXFILES TRANSACTION LOG '$source' AT LOCATION '$target': $why."
    )

  // BUILD INDEXTABLES COMPANION

  private val BuildCommand = "BUILD INDEXTABLES COMPANION"

  /** A write into a companion index over Parquet files it does not own. */
  def companionIndexReadOnly(table: String, source: String, format: String)
      : IndexTablesException = {
    val what = if (format == "parquet") "the Parquet files" else s"the $format table"
    error(
      "INDEXTABLES_COMPANION_INDEX_READ_ONLY",
      s"Table $table is a companion index of $what at $source, which it does not " +
        "own, and cannot be written to. Write the rows to the source, then run " +
        s"$BuildCommand FOR ${format.toUpperCase(java.util.Locale.ROOT)} '$source' AT " +
        s"LOCATION '$table' again."
    )
  }

  def companionSourceNotFound(source: String): IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_SOURCE_NOT_FOUND",
      s"$BuildCommand: the source directory $source does not exist. Check the path."
    )

  /**
   * A companion index further behind its source table than the read allows; `unit` is what the
   * format calls its versions (`version`, or an Iceberg `snapshot`).
   */
  def companionIndexStale(
      index: String,
      format: String,
      unit: String,
      source: String,
      synced: Long,
      latest: String,
      behind: Long,
      allowed: Long): IndexTablesException = {
    val lag = if (behind == Long.MaxValue) s"its history no longer holds $unit $synced"
    else s"$behind ${unit}s behind"
    error(
      "INDEXTABLES_COMPANION_INDEX_STALE",
      s"The companion index $index reflects $unit $synced of its $format source $source, " +
        s"which is at $latest now: $lag, more than " +
        s"spark.indextables.read.companion.maxSourceVersionLag ($allowed) allows. Sync it " +
        s"(run its $BuildCommand FOR ${format.toUpperCase(java.util.Locale.ROOT)} again), or " +
        "raise the setting."
    )
  }

  /** The source is not a table of the format the command names. */
  def companionSourceNotATable(format: String, source: String, why: String)
      : IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_SOURCE_NOT_A_TABLE",
      s"$BuildCommand FOR ${format.toUpperCase(java.util.Locale.ROOT)}: $source is not a " +
        s"$format table: $why. Check the path and the format."
    )

  /** The version or snapshot the command asks for cannot be read. */
  def companionSourceVersionUnavailable(
      format: String,
      source: String,
      version: String,
      cause: Throwable): IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_SOURCE_VERSION_UNAVAILABLE",
      s"$BuildCommand: $version of the $format table $source cannot be read: " +
        Option(cause.getMessage).getOrElse(cause.toString).linesIterator.take(3).mkString(" ") +
        ". It may have expired (its log or files were cleaned up) or not exist yet; ask for a " +
        "version the table still holds, or for none (its latest).",
      cause
    )

  /** A feature of the source table a companion index cannot honour. */
  def companionSourceFeatureUnsupported(
      format: String,
      source: String,
      feature: String,
      way: String)
      : IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_SOURCE_FEATURE_UNSUPPORTED",
      s"$BuildCommand: the $format table $source uses $feature, which a companion index cannot " +
        s"honour: $way."
    )

  /** A library a source format needs is not on the class path. */
  def companionSourceLibraryMissing(format: String, library: String): IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_SOURCE_LIBRARY_MISSING",
      s"A companion index of a $format table reads the table through $library, which is " +
        "not on the class path: add it to the session (for example spark.jars.packages), as " +
        s"for any read of a $format table."
    )

  /**
   * The split of a source file with deleted rows does not hold its rows in order, so the rows
   * cannot be left out of the index.
   */
  def companionDeletedRowsUnplaceable(format: String, file: String): IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_DELETED_ROWS_UNPLACEABLE",
      s"$BuildCommand: the $format file $file has deleted rows (a deletion vector), but its " +
        "companion split does not hold its rows in file order, so the index cannot leave them " +
        "out. Rewrite the file without them (Delta: REORG TABLE ... APPLY (PURGE)), or give " +
        "the build a larger WRITER HEAP SIZE, then build again."
    )

  def companionSourceEmpty(source: String): IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_SOURCE_EMPTY",
      s"$BuildCommand: the source directory $source holds no Parquet files (files and " +
        "directories whose names start with _ or . are ignored, as Spark ignores them)."
    )

  /** A source column the index cannot hold, and why. */
  def companionColumnUnsupported(source: String, column: String, dataType: DataType, why: String)
      : IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_UNSUPPORTED_COLUMN",
      s"$BuildCommand: column '$column' of $source has type ${dataType.simpleString}, which " +
        s"a companion index cannot hold ($why). The index serves every column of its source, " +
        "searched or not (EXCLUDE COLUMNS only stops it being searched): rewrite the column in " +
        "the source as a supported type, or build over a copy without it."
    )

  /**
   * A source whose columns an index cannot follow: one changed type or left (see
   * [[io.indextables.spark.sync.SourceSchema]]), or a file does not fit the index's columns.
   *
   * @param where the source table at its version, or the Parquet file
   * @param why   which column is at fault, and how
   */
  def companionSchemaChanged(index: String, where: String, why: String): IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_SCHEMA_CHANGED",
      s"$BuildCommand: $where does not fit the columns of the index $index: $why. A companion " +
        "index takes new columns, as mergeSchema does, but never changes or drops one: build a " +
        "new index at another location for the new schema. Nothing was committed."
    )

  /** Hive partition directories that do not form one partitioning. */
  def companionPartitionLayout(source: String, file: String, why: String): IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_PARTITION_LAYOUT",
      s"$BuildCommand: the file $file of $source does not fit the source's partitioning: $why."
    )

  /** A clause the command does not know. */
  def companionUnknownOption(clause: String): IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_UNKNOWN_OPTION",
      s"$BuildCommand: unknown clause '$clause'. It takes INCLUDE COLUMNS (..), EXCLUDE " +
        "COLUMNS (..), INDEXING MODES (col: 'mode', ..), FASTFIELDS MODE DISABLED|HYBRID|" +
        "PARQUET_ONLY, TARGET INPUT SIZE <size>, WRITER HEAP SIZE <size>, WHERE <partition " +
        "predicate> and DRY RUN."
    )

  def companionUnknownIndexingMode(column: String, mode: String): IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_UNKNOWN_INDEXING_MODE",
      s"$BuildCommand: unknown indexing mode '$mode' for column '$column' in INDEXING MODES: " +
        "use text, string, json or ip."
    )

  /** A clause whose value the command cannot use (`expected` says what it takes). */
  def companionInvalidOption(clause: String, value: String, expected: String)
      : IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_INVALID_OPTION",
      s"$BuildCommand: invalid $clause '$value': $expected."
    )

  /** A clause that names a column the source does not have. */
  def companionUnknownColumn(clause: String, column: String, columns: Seq[String])
      : IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_UNKNOWN_COLUMN",
      s"$BuildCommand: $clause names column '$column', which the source does not have (its " +
        s"columns: ${columns.mkString(", ")}). Partition columns are not indexed."
    )

  /** The index location holds something that is not an index of this source. */
  def companionTargetMismatch(index: String, why: String): IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_TARGET_MISMATCH",
      s"$BuildCommand: cannot build at $index: $why."
    )

  /** A rerun asks for other indexing than the index was built with. */
  def companionIndexingChanged(index: String, clause: String, recorded: String, asked: String)
      : IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_INDEXING_CHANGED",
      s"$BuildCommand: the index $index was built with $clause $recorded, but this run asks " +
        s"for $asked. Run it with the same clauses (or none: the recorded ones apply), or " +
        "build a new index at another location."
    )

  /** A concurrent commit to the index overlaps this build's; nothing of it was committed. */
  def companionBuildConflict(index: String, detail: String): IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_BUILD_CONFLICT",
      s"$BuildCommand: another commit to the index $index overlaps this build ($detail). " +
        "Nothing of this build was committed and its splits were deleted; run it again to " +
        "index what is still missing."
    )

  /** A second stream over one index in one application. */
  def companionStreamActive(index: String): IndexTablesException =
    error(
      "INDEXTABLES_COMPANION_STREAM_ACTIVE",
      s"$BuildCommand ... WITH STREAMING: a stream already syncs the index $index in this " +
        "application. Stop it first (the stream's stop(), or CompanionStreams.stop), or sync " +
        "once without WITH STREAMING."
    )
}

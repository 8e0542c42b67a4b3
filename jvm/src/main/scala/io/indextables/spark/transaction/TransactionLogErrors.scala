package io.indextables.spark.transaction

import org.apache.hadoop.fs.Path

/**
 * Raised for every transaction-log failure that a user can act on: a missing table or version,
 * an unreadable version file, an unsupported protocol, or a commit that kept conflicting.
 * The message always names the table or file at fault.
 */
class TransactionLogException(message: String, cause: Throwable = null)
  extends RuntimeException(message, cause)

/** Thrown when a commit gave up after the configured number of conflicting attempts. */
class ConcurrentCommitException(message: String) extends TransactionLogException(message)

/** One factory method per transaction-log error, so that messages stay consistent. */
object TransactionLogErrors {

  def tableNotFound(tablePath: Path): TransactionLogException =
    new TransactionLogException(
      s"No IndexTables table at $tablePath: ${VersionFiles.fileName(0)} is missing from " +
        s"${new Path(tablePath, TransactionLog.LogDirName)}. Write to the path first to create it.")

  def versionNotFound(tablePath: Path, version: Long, latest: Option[Long])
      : TransactionLogException =
    new TransactionLogException(
      s"Version $version of table $tablePath does not exist (${VersionFiles.fileName(version)} " +
        s"is missing); latest version is ${latest.map(_.toString).getOrElse("none")}.")

  def missingVersionFile(tablePath: Path, version: Long, needed: Long): TransactionLogException =
    new TransactionLogException(
      s"Transaction log of table $tablePath is incomplete: ${VersionFiles.fileName(version)} is " +
        s"missing but needed to reconstruct version $needed.")

  def unreadableVersionFile(file: Path, reason: String, cause: Throwable = null)
      : TransactionLogException =
    new TransactionLogException(s"Cannot read transaction log file $file: $reason", cause)

  def unsupportedReaderVersion(tablePath: Path, required: Int): TransactionLogException =
    new TransactionLogException(
      s"Table $tablePath requires reader protocol version $required, but this IndexTables " +
        s"supports reader versions up to ${TransactionLog.MaxReaderVersion}. " +
        "Upgrade IndexTables to read it.")

  def unsupportedWriterVersion(tablePath: Path, required: Int): TransactionLogException =
    new TransactionLogException(
      s"Table $tablePath requires writer protocol version $required, but this IndexTables " +
        s"supports writer versions up to ${TransactionLog.MaxWriterVersion}. " +
        "Upgrade IndexTables to write to it.")

  def unsupportedReaderVersionIn(tablePath: Path, file: Path, required: Int)
      : TransactionLogException =
    new TransactionLogException(
      s"Table $tablePath requires reader protocol version $required (in $file), but this " +
        s"IndexTables supports reader versions up to ${TransactionLog.MaxReaderVersion}. " +
        "Upgrade IndexTables to read it.")

  def versionRemoved(tablePath: Path, version: Long, earliest: Option[Long])
      : TransactionLogException =
    new TransactionLogException(
      s"Version $version of table $tablePath can no longer be read: its version files were " +
        "removed by log retention and no checkpoint covers it; the earliest readable version " +
        s"is ${earliest.map(_.toString).getOrElse("unknown")}.")

  def timestampBeforeTable(tablePath: Path, timestamp: String, earliest: Long)
      : TransactionLogException =
    new TransactionLogException(
      s"Timestamp $timestamp is before the earliest readable version ($earliest) of table " +
        s"$tablePath; use a later timestamp or versionAsOf.")

  def missingProtocolOrMetadata(tablePath: Path, version: Long, what: String)
      : TransactionLogException =
    new TransactionLogException(
      s"Table $tablePath has no $what action in versions 0..$version; the log is corrupt.")

  def invalidCommit(tablePath: Path, operation: String, reason: String): TransactionLogException =
    new TransactionLogException(s"Cannot commit '$operation' to table $tablePath: $reason")

  def tooManyConflicts(tablePath: Path, operation: String, attempts: Int)
      : ConcurrentCommitException =
    new ConcurrentCommitException(
      s"Gave up committing '$operation' to table $tablePath after $attempts attempts: other " +
        "writers committed first every time. Retry the operation, or raise " +
        s"${TransactionLogConfig.RetryMaxAttempts.key}.")

  def invalidOption(key: String, value: String, expected: String): IllegalArgumentException =
    new IllegalArgumentException(s"Option $key must be $expected, got '$value'")
}

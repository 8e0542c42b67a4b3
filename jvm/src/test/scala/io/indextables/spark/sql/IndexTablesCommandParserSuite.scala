package io.indextables.spark.sql

import org.apache.spark.sql.execution.SparkSqlParser
import org.scalatest.funsuite.AnyFunSuite

import io.indextables.spark.exceptions.IndexTablesException
import io.indextables.spark.sql.commands.IndexTablesCommandTarget.{TableName, TablePath}
import io.indextables.spark.sql.commands._

/** The command grammar, without a session. */
class IndexTablesCommandParserSuite extends AnyFunSuite {
  // A session's parser, which ours delegates to (Spark 4's Catalyst parser has no DESCRIBE TABLE).
  private val sparkParser = new SparkSqlParser()
  private val parser = new IndexTables4SparkSqlParser(sparkParser)

  test("every command, with a path and with a table name, INDEXTABLES or TANTIVY4SPARK") {
    for (kw <- Seq("INDEXTABLES", "tantivy4spark", "IndexTables")) {
      assert(parser.parsePlan(s"CHECKPOINT $kw '/t/a'") == CheckpointIndexTablesCommand(
        TablePath("/t/a")))
      assert(parser.parsePlan(s"describe $kw state db.logs") ==
        DescribeIndexTablesStateCommand(TableName(Seq("db", "logs"))))
      assert(parser.parsePlan(s"""DESCRIBE $kw TRANSACTION LOG "s3://b/t";""") ==
        DescribeIndexTablesTransactionLogCommand(TablePath("s3://b/t")))
      assert(parser.parsePlan(s"DESC $kw HISTORY `my table`") ==
        DescribeIndexTablesHistoryCommand(TableName(Seq("my table"))))
    }
  }

  test("comments, whitespace and escapes in the path") {
    assert(parser.parsePlan("/* c */ CHECKPOINT\n  INDEXTABLES -- c\n 'a\\'b'") ==
      CheckpointIndexTablesCommand(TablePath("a'b")))
  }

  test("a malformed command fails with an error naming the position") {
    val e = intercept[IndexTablesException](parser.parsePlan("DESCRIBE INDEXTABLES STATUS '/t'"))
    assert(e.getMessage.contains("Syntax error in IndexTables command"), e.getMessage)
    intercept[IndexTablesException](parser.parsePlan("CHECKPOINT INDEXTABLES"))
    intercept[IndexTablesException](parser.parsePlan("CHECKPOINT INDEXTABLES '/a' extra"))
  }

  test("other DESCRIBE statements go to Spark") {
    // DescribeRelation's output carries fresh expression ids, so compare the plans' shapes.
    def shape(sql: String) = parser.parsePlan(sql).toString.replaceAll("#\\d+", "")
    def sparkShape(sql: String) = sparkParser.parsePlan(sql).toString.replaceAll("#\\d+", "")
    assert(shape("DESCRIBE TABLE t") == sparkShape("DESCRIBE TABLE t"))
    assert(shape("DESCRIBE indextables_t") == sparkShape("DESCRIBE indextables_t"))
    assert(!IndexTablesCommandParser.isCommand("SELECT 'CHECKPOINT INDEXTABLES'"))
  }

  test("MERGE SPLITS with every clause, COMPACT and DESCRIBE MERGE JOBS") {
    assert(parser.parsePlan("MERGE SPLITS '/t/a'") ==
      MergeSplitsCommand(TablePath("/t/a"), None, None, None, None))
    assert(parser.parsePlan(
      "merge splits db.logs WHERE day = '2024-01-01' AND hour > 9 TARGET SIZE 100M " +
        "MAX DEST SPLITS 3 MAX SOURCE SPLITS PER MERGE '50';") ==
      MergeSplitsCommand(
        TableName(Seq("db", "logs")),
        Some("day = '2024-01-01' AND hour > 9"),
        Some("100M"),
        Some("3"),
        Some("50")))
    assert(parser.parsePlan("MERGE SPLITS `size` TARGET SIZE 5G") ==
      MergeSplitsCommand(TableName(Seq("size")), None, Some("5G"), None, None))
    assert(parser.parsePlan("MERGE SPLITS t MAX DEST SPLITS 1") ==
      MergeSplitsCommand(TableName(Seq("t")), None, None, Some("1"), None))
    assert(parser.parsePlan("COMPACT TANTIVY4SPARK '/t'") ==
      CheckpointIndexTablesCommand(TablePath("/t")))
    assert(parser.parsePlan("DESCRIBE INDEXTABLES MERGE JOBS") == DescribeMergeJobsCommand)
    intercept[IndexTablesException](parser.parsePlan("MERGE SPLITS"))
    intercept[IndexTablesException](parser.parsePlan("MERGE SPLITS '/t' WHERE"))
    intercept[IndexTablesException](parser.parsePlan("MERGE SPLITS '/t' TARGET SIZE"))
    // Spark's MERGE INTO is not ours.
    assert(!IndexTablesCommandParser.isCommand("MERGE INTO t USING s ON t.id = s.id"))
  }

  test("PURGE, DROP PARTITIONS, TRUNCATE TIME TRAVEL and REPAIR, as upstream writes them") {
    for (kw <- Seq("INDEXTABLE", "indextables", "TANTIVY4SPARK")) {
      assert(parser.parsePlan(s"PURGE $kw '/t'") ==
        PurgeIndexTableCommand(TablePath("/t"), None, None, dryRun = false))
    }
    assert(parser.parsePlan(
      "purge indextable db.logs older than 7 days transaction log retention 36 hours dry run;") ==
      PurgeIndexTableCommand(TableName(Seq("db", "logs")), Some(168L), Some(36L), dryRun = true))
    assert(parser.parsePlan("PURGE INDEXTABLE '/t' TRANSACTION LOG RETENTION 2 DAYS") ==
      PurgeIndexTableCommand(TablePath("/t"), None, Some(48L), dryRun = false))
    // The predicate is handed on as written, comments and spacing included.
    assert(parser.parsePlan(
      "DROP TANTIVY4SPARK PARTITIONS FROM logs WHERE hour > 9 AND  day = '2024-01-01' ;") ==
      DropPartitionsCommand(TableName(Seq("logs")), Some("hour > 9 AND  day = '2024-01-01'")))
    assert(parser.parsePlan("DROP INDEXTABLES PARTITIONS FROM '/t'") ==
      DropPartitionsCommand(TablePath("/t"), None))
    assert(parser.parsePlan("TRUNCATE INDEXTABLES TIME TRAVEL '/t' DRY RUN") ==
      TruncateTimeTravelCommand(TablePath("/t"), dryRun = true))
    assert(parser.parsePlan("truncate tantivy4spark time travel `time`") ==
      TruncateTimeTravelCommand(TableName(Seq("time")), dryRun = false))
    assert(parser.parsePlan("REPAIR INDEXFILES TRANSACTION LOG '/t/_transaction_log' " +
      "AT LOCATION '/t/_repaired'") == RepairIndexFilesCommand(
      "/t/_transaction_log",
      "/t/_repaired"))
    intercept[IndexTablesException](parser.parsePlan("PURGE INDEXTABLE '/t' OLDER THAN 2 WEEKS"))
    intercept[IndexTablesException](parser.parsePlan("PURGE INDEXTABLE '/t' OLDER THAN x DAYS"))
    intercept[IndexTablesException](parser.parsePlan("REPAIR INDEXFILES TRANSACTION LOG '/t'"))
  }

  test("STOP INDEXTABLES COMPANION STREAM names the index") {
    assert(
      parser.parsePlan("stop indextables companion stream at location '/idx'") ===
        StopCompanionStreamCommand("/idx"))
    intercept[IndexTablesException](parser.parsePlan("STOP INDEXTABLES COMPANION STREAM '/idx'"))
    // Not ours: Spark's parser reports it.
    assert(!IndexTablesCommandParser.isCommand("STOP STREAMING"))
  }

  test("BUILD INDEXTABLES COMPANION with every clause, before or after AT LOCATION") {
    def build(sql: String) = parser.parsePlan(sql).asInstanceOf[BuildCompanionCommand]
    assert(build("BUILD INDEXTABLES COMPANION FOR PARQUET '/src' AT LOCATION '/idx'") ==
      BuildCompanionCommand("PARQUET", "/src", "/idx", BuildCompanionOptions(), dryRun = false))
    val all = BuildCompanionCommand(
      "parquet",
      "s3://b/src",
      "/idx",
      BuildCompanionOptions(
        includeColumns = Some(Seq("a", "b", "mode")),
        excludeColumns = Some(Seq("c")),
        indexingModes = Some(Seq("msg" -> "text", "ip" -> "ip", "payload" -> "json")),
        fastFieldsMode = Some("HYBRID"),
        targetInputSize = Some("1G"),
        writerHeapSize = Some("100000000"),
        where = Some("day >= '2024-01-01' AND hour = 3")
      ),
      dryRun = true
    )
    assert(build(
      "build tantivy4spark companion for parquet \"s3://b/src\" AT LOCATION '/idx' " +
        "INCLUDE COLUMNS (a, `b`, mode) EXCLUDE COLUMNS (c) " +
        "INDEXING MODES (msg: 'text', 'ip':'ip', payload : json) FASTFIELDS MODE HYBRID " +
        "TARGET INPUT SIZE 1G WRITER HEAP SIZE 100000000 " +
        "WHERE day >= '2024-01-01' AND hour = 3 DRY RUN;") == all)
    // Upstream's order: the clauses before AT LOCATION.
    assert(build(
      "BUILD INDEXTABLES COMPANION FOR parquet 's3://b/src' WHERE day >= '2024-01-01' AND " +
        "hour = 3 INCLUDE COLUMNS (a, `b`, mode) EXCLUDE COLUMNS (c) INDEXING MODES " +
        "('msg':'text', 'ip':'ip', 'payload':'json') FASTFIELDS MODE 'HYBRID' TARGET INPUT " +
        "SIZE '1G' WRITER HEAP SIZE 100000000 AT LOCATION '/idx' DRY RUN") == all)
    assert(IndexTablesCommandParser.isCommand("  build\n IndexTables companion for delta 'x'"))
    assert(!IndexTablesCommandParser.isCommand("BUILD TABLE x"))
    // Iceberg's clauses: the catalog or warehouse that holds the table, and a snapshot.
    assert(build(
      "BUILD INDEXTABLES COMPANION FOR ICEBERG 'db.events' CATALOG 'lake' FROM SNAPSHOT " +
        "4242 AT LOCATION '/idx'") == BuildCompanionCommand(
      "ICEBERG",
      "db.events",
      "/idx",
      BuildCompanionOptions(catalog = Some("lake"), fromSnapshot = Some("4242")),
      dryRun = false))
    assert(build(
      "BUILD INDEXTABLES COMPANION FOR iceberg 'db.events' AT LOCATION '/idx' warehouse " +
        "'s3://b/wh'").options == BuildCompanionOptions(warehouse = Some("s3://b/wh")))
    // Upstream's stream clause, in either place; a WHERE predicate ends where it starts.
    assert(build(
      "BUILD INDEXTABLES COMPANION FOR DELTA '/t' WHERE day = '1' WITH STREAMING POLL " +
        "INTERVAL 30 seconds AT LOCATION '/idx'").options == BuildCompanionOptions(
      where = Some("day = '1'"),
      streamingPollInterval = Some("30" -> "SECONDS")))
    assert(build("BUILD INDEXTABLES COMPANION FOR DELTA '/t' AT LOCATION '/idx' WITH " +
      "STREAMING POLL INTERVAL 2 MINUTES").options.streamingPollInterval == Some("2" -> "MINUTES"))
  }

  test("WITH STREAMING POLL INTERVAL becomes an interval in ms, and is checked") {
    def request(options: BuildCompanionOptions, dryRun: Boolean = false) =
      BuildCompanionCommand.request("delta", options, dryRun, defaultHeapSize = 1L << 30)
    def every(n: String, unit: String) =
      BuildCompanionOptions(streamingPollInterval = Some(n -> unit))
    assert(request(every("30", "SECONDS")).pollIntervalMs == Some(30000L))
    assert(request(every("2", "MINUTES")).pollIntervalMs == Some(120000L))
    assert(request(BuildCompanionOptions()).pollIntervalMs.isEmpty)
    for ((options, dryRun, why) <- Seq(
        (every("0", "SECONDS"), false, "an interval from 1 second to 7 days"),
        (every("99999999999999999999", "MINUTES"), false, "an interval from 1 second to 7 days"),
        (every("5", "SECONDS"), true, "not with DRY RUN"),
        (every("5", "SECONDS").copy(fromVersion = Some("3")), false, "not with FROM VERSION 3")
      )) {
      val e = intercept[IndexTablesException](request(options, dryRun))
      assert(e.errorClass == "INDEXTABLES_COMPANION_INVALID_OPTION", e.getMessage)
      assert(e.getMessage.contains(why), e.getMessage)
    }
    val hours = intercept[IndexTablesException](parser.parsePlan(
      "BUILD INDEXTABLES COMPANION FOR DELTA '/t' AT LOCATION '/i' WITH STREAMING POLL " +
        "INTERVAL 1 HOURS"))
    assert(hours.errorClass == "INDEXTABLES_COMMAND_SYNTAX_ERROR", hours.getMessage)
  }

  test("BUILD INDEXTABLES COMPANION checks each format's clauses before reading a source") {
    def request(format: String, options: BuildCompanionOptions) =
      BuildCompanionCommand.request(format, options, dryRun = false, defaultHeapSize = 1L << 30)
    def refused(format: String, options: BuildCompanionOptions) =
      intercept[IndexTablesException](request(format, options))
    assert(request("ICEBERG", BuildCompanionOptions(fromSnapshot = Some("77"))).fromVersion ==
      Some(77L))
    assert(request("delta", BuildCompanionOptions(fromVersion = Some("3"))).fromVersion ==
      Some(3L))
    for ((format, options, clause) <- Seq(
        ("delta", BuildCompanionOptions(fromSnapshot = Some("1")), "FROM SNAPSHOT"),
        ("parquet", BuildCompanionOptions(catalog = Some("c")), "CATALOG"),
        ("delta", BuildCompanionOptions(warehouse = Some("/w")), "WAREHOUSE"),
        ("iceberg", BuildCompanionOptions(fromVersion = Some("1")), "FROM VERSION"),
        (
          "iceberg",
          BuildCompanionOptions(catalog = Some("c"), warehouse = Some("/w")),
          "WAREHOUSE"),
        ("hudi", BuildCompanionOptions(), "source format")
      )) {
      val e = refused(format, options)
      assert(e.errorClass == "INDEXTABLES_COMPANION_INVALID_OPTION", e.getMessage)
      assert(e.getMessage.contains(s"invalid $clause"), e.getMessage)
    }
  }

  test("BUILD INDEXTABLES COMPANION refuses an unknown clause by name, and a repeated one") {
    val unknown = intercept[IndexTablesException](parser.parsePlan(
      "BUILD INDEXTABLES COMPANION FOR PARQUET '/s' HASHED FASTFIELDS INCLUDE ('a') " +
        "AT LOCATION '/i'"))
    assert(unknown.errorClass == "INDEXTABLES_COMPANION_UNKNOWN_OPTION", unknown.getMessage)
    assert(unknown.getMessage.contains("'HASHED FASTFIELDS INCLUDE ('a')'"), unknown.getMessage)
    val after = intercept[IndexTablesException](parser.parsePlan(
      "BUILD INDEXTABLES COMPANION FOR PARQUET '/s' AT LOCATION '/i' SCHEMA_SOURCE 'x' DRY RUN"))
    assert(after.errorClass == "INDEXTABLES_COMPANION_UNKNOWN_OPTION", after.getMessage)
    val twice = intercept[IndexTablesException](parser.parsePlan(
      "BUILD INDEXTABLES COMPANION FOR PARQUET '/s' EXCLUDE COLUMNS (a) AT LOCATION '/i' " +
        "EXCLUDE COLUMNS (b)"))
    assert(twice.errorClass == "INDEXTABLES_COMPANION_INVALID_OPTION", twice.getMessage)
    // No AT LOCATION: a syntax error.
    val syntax = intercept[IndexTablesException](
      parser.parsePlan("BUILD INDEXTABLES COMPANION FOR PARQUET '/s'"))
    assert(syntax.errorClass == "INDEXTABLES_COMMAND_SYNTAX_ERROR", syntax.getMessage)
  }

  test("Spark's own DROP and TRUNCATE statements still go to Spark") {
    assert(!IndexTablesCommandParser.isCommand("DROP TABLE indextables"))
    assert(!IndexTablesCommandParser.isCommand("TRUNCATE TABLE t"))
    assert(!IndexTablesCommandParser.isCommand("DROP VIEW purge"))
    assert(IndexTablesCommandParser.isCommand("  drop\n IndexTables partitions from t where a=1"))
  }
}

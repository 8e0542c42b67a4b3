package io.indextables.spark.read

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.types.StructType

import io.indextables.spark.config.IndexTablesOptions
import io.indextables.spark.transaction.TransactionLog
import io.indextables.spark.util.SerializableHadoopConf

/** A read plan and the first split of a table, to open its searcher directly in tests. */
object SplitFixtures {

  def planAndSplit(spark: SparkSession, path: String): (ReadPlan, SplitInputPartition) = {
    val conf = spark.sessionState.newHadoopConf()
    val snap =
      TransactionLog.forTable(path, conf, IndexTablesOptions.Defaults.logSettings).snapshot()
    val a = snap.allFiles.head
    val plan = ReadPlan(
      path,
      new SerializableHadoopConf(conf),
      new StructType(),
      new StructType(),
      "UTC",
      IndexedSeq(ReadVariant(None, None, Nil)),
      None,
      2048,
      1L << 28,
      queryCache = false)
    val split = SplitInputPartition(
      a.path,
      a.partitionValues,
      a.numRecords,
      Some(a.size),
      a.footerStartOffset.get,
      a.footerEndOffset.get,
      snap.docMappingFor(a),
      hasLongTokens = false)
    (plan, split)
  }
}

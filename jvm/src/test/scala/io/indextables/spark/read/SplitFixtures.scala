package io.indextables.spark.read

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow
import org.apache.spark.sql.types.{StructField, StructType}

import io.indextables.spark.config.IndexTablesOptions
import io.indextables.spark.schema.IndexedField
import io.indextables.spark.transaction.{AddAction, Snapshot, TableLayout, TransactionLog}
import io.indextables.spark.util.SerializableHadoopConf
import io.indextables.tantivy4java.split.SplitMatchAllQuery

/** Read plans and splits of a table, to open their searchers directly in tests. */
object SplitFixtures {

  def snapshotOf(spark: SparkSession, path: String): Snapshot = {
    val conf = spark.sessionState.newHadoopConf()
    TransactionLog.forTable(path, conf, IndexTablesOptions.Defaults.logSettings).snapshot()
  }

  /** A plan reading `fields` (none: no column) of the table at `path`, as a scan builds it. */
  private def planOf(spark: SparkSession, snap: Snapshot, fields: Seq[IndexedField]) =
    ReadPlan(
      snap.tablePath.toString,
      new SerializableHadoopConf(spark.sessionState.newHadoopConf()),
      StructType(fields.map(f => StructField(f.name, f.dataType))),
      new StructType(),
      "UTC",
      IndexedSeq(ReadVariant(None, None, fields)),
      None,
      2048,
      1L << 28,
      queryCache = false,
      parquetRoot = Some(TableLayout.parquetRoot(snap).toString),
      parquetPathsFromDirectory = TableLayout.parquetPathsFromDirectory(snap)
    )

  private def partitionOf(snap: Snapshot, a: AddAction) =
    SplitInputPartition(
      a.path,
      a.partitionValues,
      a.numRecords,
      Some(a.size),
      a.footerStartOffset.get,
      a.footerEndOffset.get,
      snap.docMappingFor(a),
      hasLongTokens = false,
      companionFiles = a.companionSourceFiles.getOrElse(Nil),
      companionSizes = a.companionSizes
    )

  def planAndSplit(spark: SparkSession, path: String): (ReadPlan, SplitInputPartition) = {
    val (plan, splits) = planAndSplits(spark, path, Nil)
    (plan, splits.head)
  }

  /** A plan reading `fields` and every live split of the table at `path`, in log order. */
  def planAndSplits(spark: SparkSession, path: String, fields: Seq[IndexedField])
      : (ReadPlan, Seq[SplitInputPartition]) = {
    val snap = snapshotOf(spark, path)
    (planOf(spark, snap, fields), snap.allFiles.map(partitionOf(snap, _)))
  }

  /**
   * Every document of `split` as (segment, doc id, its row of `plan`'s fields), in doc order,
   * read through the search route: a match-all search, then the documents fetched by number.
   */
  def docsOf(plan: ReadPlan, split: SplitInputPartition): Seq[(Int, Int, GenericInternalRow)] = {
    val checked = SplitSearchEngine.check(plan, split)
    val searcher = SplitSearchEngine.open(checked, split, plan)
    try {
      val result = searcher.search(new SplitMatchAllQuery(), split.numRecords.get.toInt)
      val (segments, docs) =
        try NativeDocs.hitIds(result)
        finally result.close()
      val fields = plan.variants.head.dataFields
      val bytes =
        NativeDocs.projected(searcher, segments, docs, fields.map(_.name).toArray, split.companion)
      val rows = new ProjectedDocDecoder(fields.zipWithIndex)
        .decode(bytes, () => new GenericInternalRow(fields.size))
      assert(rows.length == docs.length, s"${split.path}: ${rows.length} rows of ${docs.length}")
      segments.indices.map(i => (segments(i), docs(i), rows(i).asInstanceOf[GenericInternalRow]))
    } finally searcher.close()
  }
}

package io.indextables.spark.read

import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.{DoubleType, FloatType, StructType}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.IndexTablesOptions
import io.indextables.spark.filters.{ManifestPruner, MixedBooleanFilter, SplitPruner}
import io.indextables.spark.config.IndexTablesConf
import io.indextables.spark.schema.{TableIndexing, TableIndexSchema, TokenLimit}
import io.indextables.spark.stats.SplitCounts
import io.indextables.spark.storage.LogStore
import io.indextables.spark.transaction.{AddAction, Snapshot, TableLayout, TablePaths}

/**
 * What one scan of a table knows before Spark offers it anything: the table's version, its
 * schema and partition columns, the read's settings and the IndexQuery tree the Catalyst rule
 * planned for it. Immutable; made by the scan builder on the driver.
 *
 * @param opts        the read's resolved settings; its options also configure file access
 * @param mixedFilter the IndexQuery tree the Catalyst rule planned for this relation, if any
 * @param latest      for time travel to an earlier version, the table's latest snapshot
 */
private[read] final case class ScanTable(
    tablePath: String,
    snapshot: Snapshot,
    opts: IndexTablesOptions,
    mixedFilter: Option[MixedBooleanFilter],
    latest: Option[Snapshot] = None) {

  val schema: StructType = TableIndexing.tableSchema(snapshot)
  val partitionColumns: Seq[String] = snapshot.metadata.partitionColumns
  val timeZone: String = SparkSession.active.sessionState.conf.sessionLocalTimeZone

  /** Whether the table is of the companion layout: its rows live in Parquet files. */
  val companion: Boolean = TableLayout.of(snapshot.protocol) == TableLayout.Companion

  /** Partition pruning and min/max data skipping over the log's entries. */
  val pruner: SplitPruner = new SplitPruner(
    schema,
    partitionColumns,
    timeZone,
    opts.get(IndexTablesConf.StatsTruncationMaxLength))

  /**
   * For time travel to an earlier version: fails with `INDEXTABLES_SPLIT_PURGED`, naming the
   * file, when a file of the splits `kept` is gone and the latest version no longer references
   * its split (PURGE deleted it), so that a purged version never reads as fewer rows. One
   * existence check per file, on the driver, for time travel only.
   */
  def checkNotPurged(kept: Seq[AddAction]): Unit = latest.foreach { now =>
    // An entry live with another deletion vector still needs the vector it names here.
    val live = now.allFiles.iterator.map(_.fileKey).toSet
    val root = new Path(tablePath)
    val parquetRoot = TableLayout.parquetRoot(snapshot)
    val hadoopConf =
      SparkSession.active.sessionState.newHadoopConfWithOptions(opts.hadoopOptions)
    val store = LogStore.forPath(root, hadoopConf)
    kept.iterator.filterNot(a => live.contains(a.fileKey)).foreach { a =>
      val files =
        (TablePaths.resolve(root, a.path) +:
          a.companionSourceFiles.getOrElse(Nil).map(TablePaths.resolve(parquetRoot, _))) ++
          a.deletionVector.flatMap(_.file).map(TablePaths.resolve(root, _, "deletionVector"))
      files.find(f => !store.exists(f)).foreach { f =>
        throw IndexTablesErrors.splitPurged(tablePath, snapshot.version, now.version, f.toString)
      }
    }
  }

  /**
   * The files of the partitions `filters` may match, and of those the ones min/max statistics
   * keep. Whole Avro manifests and blocks whose partition bounds rule the read out are never
   * loaded, and entries of other partitions are skipped as they are decoded. A read with no
   * filter on partition columns alone (so nothing a manifest's bounds could rule out) takes the
   * snapshot's files, which are loaded once per snapshot: reading the manifests again for every
   * query cost a query of a table with an Avro state about 25 ms more than one of a table
   * without (a stream's table of 100 micro-batches against one batch write, 2 splits each).
   */
  def candidates(filters: Seq[Filter]): ScanCandidates = {
    val manifestPruner = new ManifestPruner(schema, partitionColumns)
    val only = opts.options.collectFirst {
      case (k, v) if k.equalsIgnoreCase(IndexTablesOptions.OnlySplitsOption) =>
        v.split("\n").filter(_.nonEmpty).toSet
    }
    val prunable = filters.exists(f =>
      f.references.nonEmpty && f.references.forall(partitionColumns.contains))
    val listed =
      if (!prunable) snapshot.allFiles
      else snapshot.filesMatching(
        bounds => manifestPruner.mayMatch(bounds, filters),
        values => pruner.mayMatchPartition(values, filters))
    val files = listed.filter(a => only.forall(_.contains(a.path)))
    ScanCandidates(files, files.filter(a => pruner.mayMatch(a, filters)))
  }

  /**
   * The distinct ways the splits `kept` hold the table's columns (from their doc mappings, and
   * which floating columns they order as Spark does), each with the union of mappings its IndexQuery is parsed against, and each split's variant.
   */
  def variants(kept: Seq[AddAction]): ScanVariants =
    // Every live split (nothing pruned, the common case): once per snapshot. (A snapshot whose
    // files were never all loaded, its manifests pruned instead, is not made to load them.)
    if (snapshot.filesLoaded && kept.size == snapshot.numFiles) {
      snapshot.derived("ScanTable.variants")(variantsOf(snapshot.allFiles))
    } else variantsOf(kept)

  private def variantsOf(kept: Seq[AddAction]): ScanVariants = {
    val bySplit = kept.map(a => (a.path, (variantOf(a), snapshot.docMappingFor(a))))
    val distinct = bySplit.map(_._2._1).distinct.toIndexedSeq
    val index = distinct.zipWithIndex.toMap
    // Each variant's own mapping, then the others' fields: an IndexQuery may name a column
    // some splits lack (see IndexQueryParsing).
    val all = bySplit.flatMap(_._2._2).distinct
    val mappings = distinct.map { v =>
      v -> TableIndexing.union(bySplit.collect { case (_, (w, Some(m))) if w == v => m } ++ all)
    }
    ScanVariants(mappings, bySplit.map { case (path, (v, _)) => path -> index(v) }.toMap)
  }

  /**
   * How split `a` holds the table's columns, once per snapshot (every query of the table asks):
   * its doc mapping's schema, and the floating columns it is recorded to hold no NaN in, or no
   * NaN with the sign bit set (the index orders their values as Spark does, so ranges on them
   * are exact).
   */
  private def variantOf(a: AddAction): TableIndexSchema =
    snapshot.derived(("ScanTable.variantOf", a.path)) {
      val schema = TableIndexing.forSplit(snapshot, a)
      val recorded = SplitCounts.noneIn(a.stats, SplitCounts.NanCount, SplitCounts.SignedNanCount)
      val exact = schema.fields.collect {
        case f
            if (f.dataType == DoubleType || f.dataType == FloatType) &&
              recorded.contains(f.name) => f.name
      }.toSet
      val variant = schema.copy(exactFloatRanges = exact)
      // One instance per distinct variant: a table's splits mostly share a few.
      snapshot.derived(("ScanTable.variant", variant))(variant)
    }

  def hasLongTokens(a: AddAction): Boolean =
    a.splitTags.exists(_.contains(TokenLimit.LongTokensTag))
}

/**
 * The files a scan's partition filters may match (`files`, what EXPLAIN counts against) and of
 * those the ones min/max statistics keep (`kept`, what the scan reads).
 */
private[read] final case class ScanCandidates(files: Seq[AddAction], kept: Seq[AddAction])

/**
 * The distinct ways a scan's splits hold the table's columns: each with the doc mapping its
 * IndexQuery is parsed against, and the variant (an index) of each split.
 */
private[read] final case class ScanVariants(
    schemas: IndexedSeq[(TableIndexSchema, Option[String])],
    ofSplit: Map[String, Int])

package io.indextables.spark.sync

import java.util.{Locale, UUID}

import scala.util.Try

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.Path
import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.types.{DataType, StructType}
import org.slf4j.LoggerFactory

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.storage.LogStore
import io.indextables.spark.transaction._
import io.indextables.spark.util.{JobDescription, SerializableHadoopConf}

/**
 * What one build did (or, for a dry run, would do).
 *
 * @param status `success`, `no_action` (the index already holds every file) or `dry_run`
 * @param version the version committed, if any
 * @param sourceVersion the source table's version the index reflects (None: a directory)
 * @param durationMs how long the build took
 */
final case class SyncResult(
    status: String,
    indexPath: String,
    sourcePath: String,
    splitsCreated: Int,
    splitsInvalidated: Int,
    filesIndexed: Int,
    bytesIndexed: Long,
    splitBytes: Long,
    version: Option[Long],
    sourceVersion: Option[Long],
    message: String,
    durationMs: Long = 0L)

/**
 * Builds or brings up to date a companion index of a [[CompanionSource]], from the driver: lists
 * the source, plans against the index's live splits ([[SyncPlanner]]: new files are indexed,
 * splits a file of which is gone are removed, their remaining files indexed again), indexes the
 * groups in one Spark job, a task per group ([[CompanionIndexer]]), and commits the result as
 * one version. The first build creates the index: the companion protocol feature, the source's
 * schema (data columns, then partition columns), and upstream's `indextables.companion.*` keys,
 * the source root among them.
 *
 * The commit is rebuilt on the newest snapshot at every attempt; a concurrent commit that
 * removed a split this build removes, or added a split over a file it indexed (another build),
 * fails it with `INDEXTABLES_COMPANION_BUILD_CONFLICT`, its splits deleted, so no row is ever
 * indexed twice. One call per build.
 */
object CompanionSync {

  private val logger = LoggerFactory.getLogger(getClass)

  val Operation: String = "BUILD COMPANION"

  /**
   * @param log        the index's transaction log (it may not exist yet)
   * @param hadoopConf the session's Hadoop configuration with the storage settings
   * @param statsTruncateAt the longest string the log's min/max statistics keep
   */
  def run(
      spark: SparkSession,
      log: TransactionLog,
      source: CompanionSource,
      request: CompanionBuildRequest,
      hadoopConf: Configuration,
      statsTruncateAt: Int): SyncResult = {
    val base = if (log.exists) Some(log.snapshot()) else None
    // Before the source's root is asked for: an Iceberg source loads its table for it.
    base.foreach(checkTarget(log.tablePath.toString, source, _))
    // The jobs of a build: the source's listing (Delta's own jobs among them), then indexing.
    val operation = s"$Operation FOR ${source.format.toUpperCase(Locale.ROOT)}" +
      (if (request.pollIntervalMs.isDefined) " (streaming)" else "")
    val table = s"${source.root} AT ${log.tablePath}"
    JobDescription.describing(spark.sparkContext, operation, table, "listing the source") {
      steps => sync(spark, log, base, source, request, hadoopConf, statsTruncateAt, steps)
    }
  }

  private def sync(
      spark: SparkSession,
      log: TransactionLog,
      base: Option[Snapshot],
      source: CompanionSource,
      request: CompanionBuildRequest,
      hadoopConf: Configuration,
      statsTruncateAt: Int,
      steps: JobDescription.Steps): SyncResult = {
    val start = System.currentTimeMillis()
    val index = log.tablePath.toString
    checkOutside(index, log.tablePath, source.root)
    val listing = source.listSince(base.flatMap(previousSync(_, request)))
    val timeZone = spark.sessionState.conf.sessionLocalTimeZone
    val recordedSchema =
      base.map(s => DataType.fromJson(s.metadata.schemaString).asInstanceOf[StructType])
    val partitions = listing.partitionSchema
    // What the schema is read from when it changed: the table's log, or a file's footer.
    def schemaSource =
      listing.version.fold(
        s"the Parquet file ${new Path(source.root, listing.files.head.path)}")(v =>
        s"the ${source.format} table ${source.root} at ${TableLayout.versionWord(source.format)} $v")
    val dataSchema = recordedSchema match {
      case Some(recorded) =>
        val recordedPartitions = base.get.metadata.partitionColumns
        val (partitionFields, data) = recorded.partition(f => recordedPartitions.contains(f.name))
        // A table's log gives its columns; a directory's are its first file's, checked below.
        val evolved = listing.dataSchema.fold(StructType(data)) { found =>
          SourceSchema.evolve(StructType(data), found).fold(
            why => throw IndexTablesErrors.companionSchemaChanged(index, schemaSource, why),
            identity)
        }
        if (recordedPartitions != partitions.fieldNames.toSeq ||
          !ParquetFooters.sameColumns(StructType(partitionFields), partitions)) {
          throw IndexTablesErrors.companionSchemaChanged(
            index,
            schemaSource,
            s"its partition columns are (${partitions.toDDL}), where the index's are " +
              s"(${StructType(partitionFields).toDDL})")
        }
        evolved
      // Every column nullable, as spark.read.parquet reads the same files.
      case None => listing.dataSchema.getOrElse(
          ParquetFooters.asNullable(source.dataSchemaOf(listing.files.head)))
    }
    // The columns the source gained since the last build, which this one adds to the index.
    val schemaChange = recordedSchema
      .map(_.filterNot(f => partitions.fieldNames.contains(f.name)).map(_.name))
      .filter(_ != dataSchema.fieldNames.toSeq)
      .map(_ => StructType(dataSchema ++ partitions))
    val inScope = request.where.map(PartitionScope.parse(spark, _, partitions, timeZone))
      .getOrElse((_: Map[String, String]) => true)
    val indexing = CompanionIndexing.resolve(
      source.root.toString,
      index,
      dataSchema,
      partitions,
      request,
      base.map(_.metadata.configuration),
      recordedSchema.map(_.fieldNames.toSeq))
    val plan = SyncPlanner.plan(
      listing.files.filter(f => inScope(f.partitionValues)),
      base.map(_.allFiles).getOrElse(Nil),
      inScope,
      request.targetInputSize,
      spark.sparkContext.defaultParallelism
    )
    // One footer read on the driver, so a changed schema fails before any task starts.
    plan.files.headOption.filter(_ => listing.dataSchema.isEmpty).foreach { f =>
      SourceSchema.misfit(source.dataSchemaOf(f), dataSchema, mayLack = false).foreach { why =>
        throw IndexTablesErrors.companionSchemaChanged(
          index,
          s"the Parquet file ${new Path(source.root, f.path)}",
          why)
      }
    }
    def result(status: String, version: Option[Long], adds: Seq[AddAction], message: String) =
      SyncResult(
        status,
        index,
        source.root.toString,
        if (status == "dry_run") plan.groups.size else adds.size,
        plan.removed.size,
        plan.files.size,
        plan.files.map(_.size).sum,
        adds.map(_.size).sum,
        version,
        listing.version,
        s"$message in ${System.currentTimeMillis() - start} ms",
        System.currentTimeMillis() - start
      )
    val recordedVersion =
      base.flatMap(_.metadata.configuration.get(TableLayout.SourceVersionKey)).map(_.toLong)
    val summary = s"${plan.files.size} Parquet files in ${plan.groups.size} splits to index, " +
      s"${plan.removed.size} splits whose files are gone or changed to remove, " +
      s"${plan.revectored.size} splits whose source rows were deleted to update, " +
      s"${plan.kept.size} kept" + listing.version.fold("")(v => s"; source version $v")
    if (request.dryRun) return result("dry_run", None, Nil, s"dry run: $summary")
    if (plan.groups.isEmpty && plan.removed.isEmpty && plan.revectored.isEmpty &&
      base.isDefined && recordedVersion == listing.version && schemaChange.isEmpty) {
      return result(
        "no_action",
        None,
        Nil,
        s"the index is up to date with ${plan.kept.size} splits" +
          listing.version.fold("")(v => s" at source version $v"))
    }
    val spec = IndexTaskSpec(
      index,
      source.root.toString,
      new SerializableHadoopConf(hadoopConf),
      dataSchema,
      partitions.fieldNames.toSeq,
      indexing.fields,
      indexing.excluded,
      indexing.fastFieldMode,
      request.heapSize,
      statsTruncateAt,
      // A new index names each split's files under their directory; an older one as it did.
      base.forall(TableLayout.parquetPathsFromDirectory),
      // A table's files written before it gained a column lack it.
      mayLackColumns = listing.dataSchema.isDefined
    )
    steps.step(s"indexing ${JobDescription.count(plan.files.size, "Parquet file")} into " +
      JobDescription.count(plan.groups.size, "split"))
    val outcomes = indexAll(spark, spec, plan.groups)
    steps.step("applying the source's deletions and committing")
    val indexed = outcomes.collect { case i: IndexOutcome.Indexed => i }
    outcomes.collectFirst { case f: IndexOutcome.Failed => f }.foreach { f =>
      delete(log, hadoopConf, indexed.map(_.add.path))
      throw f.error
    }
    // The source's deleted rows, as deletion vectors of the splits (new ones and revectored).
    val vectors = new SourceDeletions(source, log.tablePath, hadoopConf)
    val present = listing.files.map(f => f.path -> f).toMap
    val (adds, revectored) =
      try {
        (
          indexed.map(i => vectors.apply(i.add, i.group.files)),
          plan.revectored.map(r =>
            vectors.apply(r, r.companionSourceFiles.getOrElse(Nil).map(present))))
      } catch {
        case e: Throwable =>
          delete(log, hadoopConf, indexed.map(_.add.path) ++ vectors.written)
          throw e
      }
    // Every split this build writes or changes reflects the source version listed.
    def stamp(a: AddAction) =
      a.copy(companionDeltaVersion = listing.version.orElse(a.companionDeltaVersion))
    val (stamped, renewed) = (adds.map(stamp), revectored.map(stamp))
    val version =
      try commit(
          log,
          base,
          source,
          listing.version,
          dataSchema,
          partitions,
          schemaChange,
          indexing,
          plan,
          stamped,
          renewed,
          request)
      catch {
        case e: Throwable =>
          delete(log, hadoopConf, adds.map(_.path) ++ vectors.written)
          throw e
      }
    logger.info(s"$Operation of $index: $summary; committed version $version")
    result("success", Some(version), adds, summary)
  }

  private def indexAll(spark: SparkSession, spec: IndexTaskSpec, groups: Seq[IndexGroup])
      : Seq[IndexOutcome] =
    if (groups.isEmpty) Nil
    else spark.sparkContext.parallelize(groups, groups.size)
      .flatMap(CompanionIndexer.index(spec, _)).collect().toSeq

  /**
   * What the index knew of every source file at its last sync, when that sync saw every file
   * (no WHERE, now or then) and each split records its files' sizes: a source may then read
   * only the versions since.
   */
  private def previousSync(snap: Snapshot, request: CompanionBuildRequest): Option[PreviousSync] = {
    val conf = snap.metadata.configuration
    val version = conf.get(TableLayout.SourceVersionKey).map(_.toLong)
    val complete = conf.get(CompleteSyncKey).contains("true") && request.where.isEmpty
    val live = snap.allFiles
    if (version.isEmpty || !complete || !live.forall(_.companionSizes.nonEmpty)) None
    else Some(PreviousSync(
      version.get,
      live.flatMap { a =>
        val sizes = a.companionSizes
        a.companionSourceFiles.getOrElse(Nil).zip(a.companionSourceVectors).map {
          case (f, vector) => SourceFile(
              f,
              sizes(f),
              0L,
              a.partitionValues,
              Some(vector).filter(_.nonEmpty).map(SourceDeletionVector))
        }
      }
    ))
  }

  /**
   * Ours: `true` when the last sync of an index of a versioned source saw all of its files (no
   * WHERE clause), so that its record of them is whole.
   */
  val CompleteSyncKey = "indextables.companion.lastSyncComplete"

  /** An existing index must be a companion index of this very source. */
  private def checkTarget(index: String, source: CompanionSource, snap: Snapshot): Unit = {
    val format = snap.metadata.configuration.getOrElse(TableLayout.SourceFormatKey, "parquet")
    if (format != source.format) throw IndexTablesErrors.companionTargetMismatch(
      index,
      s"its source is of format $format, not ${source.format}")
    snap.metadata.configuration.get(TableLayout.SourceTablePathKey) match {
      case None => throw IndexTablesErrors.companionTargetMismatch(
          index,
          "it holds an IndexTables table that is not a companion index of external Parquet " +
            "files; give a new location")
      case Some(root) if new Path(root) != source.root =>
        throw IndexTablesErrors
          .companionTargetMismatch(
            index,
            s"it is the companion index of $root, not of ${source.root}")
      case _ =>
    }
  }

  /** The index must not lie among the source's files, where a build would find its splits. */
  private def checkOutside(index: String, indexRoot: Path, sourceRoot: Path): Unit = {
    val i = indexRoot.toUri
    val s = sourceRoot.toUri
    val prefix = s.getPath.stripSuffix("/") + "/"
    val sameFs = i.getScheme == s.getScheme && i.getAuthority == s.getAuthority
    val inside = sameFs && (i.getPath.stripSuffix("/") == s.getPath.stripSuffix("/") ||
      (i.getPath.startsWith(prefix) &&
        !ParquetDirectorySource.hidden(i.getPath.substring(prefix.length))))
    if (inside) throw IndexTablesErrors.companionTargetMismatch(
      index,
      s"it lies inside the source directory $sourceRoot; put it elsewhere, or in a directory " +
        "whose name starts with _")
  }

  private[sync] def commit(
      log: TransactionLog,
      base: Option[Snapshot],
      source: CompanionSource,
      sourceVersion: Option[Long],
      dataSchema: StructType,
      partitions: StructType,
      schemaChange: Option[StructType],
      indexing: CompanionIndexing,
      plan: SyncPlan,
      adds: Seq[AddAction],
      renewed: Seq[AddAction],
      request: CompanionBuildRequest): Long = {
    val index = log.tablePath.toString
    def conflict(detail: String) = IndexTablesErrors.companionBuildConflict(index, detail)
    val parameters = Map(
      "source" -> source.root.toString,
      "sourceFormat" -> source.format,
      "targetInputSize" -> request.targetInputSize.toString) ++
      request.where.map("where" -> _) ++ sourceVersion.map("sourceVersion" -> _.toString)
    val metrics = Map(
      "numFiles" -> adds.size.toString,
      "numRemovedFiles" -> plan.removed.size.toString,
      "numDeletionVectorsUpdated" -> renewed.size.toString,
      "numSourceFiles" -> plan.files.size.toString,
      "numOutputRows" -> adds.flatMap(_.numRecords).sum.toString,
      "numOutputBytes" -> adds.map(_.size).sum.toString
    )
    // Schema deduplication, as writes do: each distinct doc mapping is stored once.
    val withRefs = adds.map(a =>
      a.docMappingJson.fold(a)(json =>
        a.copy(docMappingJson = None, docMappingRef = Some(SchemaHash.compute(json)))))
    val registry = adds.flatMap(a =>
      a.docMappingJson.map(json => SchemaHash.registryKey(SchemaHash.compute(json)) -> json)).toMap
    val ours = adds.flatMap(_.companionSourceFiles.getOrElse(Nil)).toSet
    log.startTransaction().commit(Operation, parameters, metrics) { current =>
      (base, current) match {
        case (None, Some(_)) => throw conflict("another build created the index meanwhile")
        case (Some(_), None) => throw conflict("the index's log is gone")
        case (Some(b), Some(c)) if b.metadata.schemaString != c.metadata.schemaString =>
          throw conflict("another build changed the index's columns")
        case _ =>
      }
      current.foreach { cur =>
        val live = cur.allFiles
        val livePaths = live.map(_.path).toSet
        plan.removed.find(r => !livePaths.contains(r.path)).foreach { r =>
          throw conflict(s"split ${r.path}, which this build removes, was removed")
        }
        val liveKeys = live.map(_.fileKey).toSet
        plan.revectored.find(r => !liveKeys.contains(r.fileKey)).foreach { r =>
          throw conflict(s"split ${r.path}, whose deleted rows this build updates, was changed")
        }
        val known = base.toSeq.flatMap(_.allFiles).map(_.path).toSet
        live.find(a =>
          !known.contains(a.path) && a.companionSourceFiles.exists(_.exists(ours))).foreach { a =>
          throw conflict(s"split ${a.path} indexes files this build indexed")
        }
      }
      val now = System.currentTimeMillis()
      val removes = (plan.removed ++ plan.revectored).map(r => r.removed(now, dataChange = true))
      val vectors = (adds ++ renewed).exists(_.deletionVector.isDefined)
      val synced = sourceVersion.toSeq.flatMap(v =>
        Seq(
          TableLayout.SourceVersionKey -> v.toString,
          CompleteSyncKey -> request.where.isEmpty.toString)).toMap ++ source.configuration
      val header = current match {
        case None =>
          val configuration = TableLayout.companionConfiguration(indexing.fastFieldMode) ++
            indexing.configuration ++ registry ++ synced ++ Map(
              TableLayout.SourceFormatKey -> source.format,
              TableLayout.SourceTablePathKey -> source.root.toString,
              TableLayout.ParquetPathsKey -> TableLayout.ParquetPathsFromDirectory
            )
          val features = TableLayout.Companion.features ++
            (if (vectors) Set(TableFeatures.DeletionVectors) else Set.empty[String])
          Seq(
            TableFeatures.protocolWith(features),
            MetadataAction(
              id = UUID.randomUUID().toString,
              schemaString = StructType(dataSchema ++ partitions).json,
              partitionColumns = partitions.fieldNames.toSeq,
              configuration = configuration,
              createdTime = Some(now)
            )
          )
        case Some(snap) =>
          val before = snap.metadata.configuration
          // New columns may bring their indexing choices (INCLUDE / EXCLUDE, modes).
          val missing = (registry ++ synced ++
            schemaChange.fold(Map.empty[String, String])(_ => indexing.configuration))
            .filterNot(e => before.get(e._1).contains(e._2))
          // How the source was named last time, where this build names it otherwise.
          val dropped =
            source.configurationKeys.filter(k => before.contains(k) && !synced.contains(k))
          val protocol =
            if (!vectors || TableFeatures.hasDeletionVectors(snap.protocol)) Nil
            else Seq(TableFeatures.withFeature(snap.protocol, TableFeatures.DeletionVectors))
          protocol ++ (if (missing.isEmpty && dropped.isEmpty && schemaChange.isEmpty) Nil
                       else Seq(snap.metadata.copy(
                         schemaString = schemaChange.fold(snap.metadata.schemaString)(_.json),
                         configuration = before -- dropped ++ missing)))
      }
      header ++ removes ++ renewed ++ withRefs
    }
  }

  /**
   * Deletes files (splits, vectors; relative to the index) no commit references; a failure only
   * leaves an orphan for PURGE.
   */
  private def delete(log: TransactionLog, conf: Configuration, files: Seq[String]): Unit =
    if (files.nonEmpty) {
      val store = LogStore.forPath(log.tablePath, conf)
      files.foreach(f => Try(store.delete(new Path(log.tablePath, f))))
    }
}

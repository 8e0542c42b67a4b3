package io.indextables.spark.catalog

import java.util.Locale

import org.apache.spark.sql.SparkSession
import org.apache.spark.sql.connector.catalog.{TableCatalog, TableChange}

import io.indextables.spark.IndexTablesErrors
import io.indextables.spark.config.{IndexTablesConf, IndexTablesOptions}
import io.indextables.spark.core.TableLogResolver
import io.indextables.spark.schema.IndexingRequest
import io.indextables.spark.transaction.SchemaHash

/**
 * The table properties of catalog tables: those CREATE / REPLACE TABLE give (TBLPROPERTIES and
 * OPTIONS), recorded in the table's metadata by its first write, and ALTER TABLE SET / UNSET
 * TBLPROPERTIES, a metadata commit. A recorded `spark.indextables.*` key is the table-property
 * layer of every later read and write (below options and the session). Driver side.
 */
private[catalog] object TableProperties {

  private val OptionPrefix = TableCatalog.OPTION_PREFIX

  /** Spark's reserved properties: the catalog's, never recorded in the table. */
  private val reserved = Set(
    TableCatalog.PROP_PROVIDER,
    TableCatalog.PROP_LOCATION,
    TableCatalog.PROP_COMMENT,
    TableCatalog.PROP_OWNER,
    TableCatalog.PROP_EXTERNAL,
    TableCatalog.PROP_IS_MANAGED_LOCATION
  )

  /**
   * The properties to record from a CREATE / REPLACE TABLE's: Spark's reserved ones (provider,
   * location, owner, ...) and `path` aside, OPTIONS without their `option.` prefix. Each is
   * checked as [[check]] says.
   */
  def defined(table: String, properties: Map[String, String]): Map[String, String] = {
    val props = properties.toSeq.flatMap {
      case (k, _) if reserved.contains(k) => None
      case (k, v) if k.startsWith(OptionPrefix) => Some(k.stripPrefix(OptionPrefix) -> v)
      case kv => Some(kv)
    }.filterNot(_._1.equalsIgnoreCase("path")).toMap
    check(table, props)
    props
  }

  /**
   * Fails on a property a table may not record: a storage setting or credential (they are never
   * stored), the schema registry, an unknown `spark.indextables.*` key (unless
   * `write.strictOptions` is false) or an invalid value of a known one.
   */
  private def check(table: String, props: Map[String, String]): Unit = {
    val storage = IndexTablesConf.storageEntries.flatMap(e => e.key +: e.aliases)
      .map(_.toLowerCase(Locale.ROOT)).toSet
    props.keys.toSeq.sorted.foreach { key =>
      val k = key.toLowerCase(Locale.ROOT)
      if (storage.contains(k) || k.startsWith("fs.") || k.startsWith("dfs."))
        throw IndexTablesErrors.storagePropertyInTable(table, key)
      if (key.startsWith(SchemaHash.RegistryKeyPrefix))
        throw IndexTablesErrors.unsupportedTableChange(table, s"setting '$key'")
    }
    val resolved = IndexTablesOptions(
      Map.empty,
      TableLogResolver.sessionConf(SparkSession.active),
      props)
    IndexTablesOptions.checkWriteOptions(props, resolved)
    val tableOnly = IndexTablesOptions(Map.empty, tableProps = props)
    IndexTablesConf.allEntries.foreach(e => tableOnly.get(e))
  }

  private def isIndexing(key: String): Boolean =
    key.toLowerCase(Locale.ROOT).startsWith(IndexingRequest.IndexingPrefix)

  /**
   * Applies ALTER TABLE SET / UNSET TBLPROPERTIES to the table at `path` as one metadata commit.
   * How the table indexes its columns cannot change this way; nor can anything but properties.
   */
  def alter(table: String, path: String, changes: Seq[TableChange]): Unit = {
    val set = changes.collect { case s: TableChange.SetProperty => s.property() -> s.value() }
    val removed = changes.collect { case r: TableChange.RemoveProperty => r.property() }
    changes.foreach {
      case _: TableChange.SetProperty | _: TableChange.RemoveProperty =>
      case other => throw IndexTablesErrors.unsupportedTableChange(table, describe(other))
    }
    (set.map(_._1) ++ removed).filter(reserved.contains).foreach { k =>
      throw IndexTablesErrors.unsupportedTableChange(table, s"setting '$k'")
    }
    check(table, set.toMap)
    val log = TableLogResolver.log(path, Map("path" -> path))
    if (!log.exists) throw IndexTablesErrors.tableNotFound(path)
    val operation = if (removed.isEmpty) "SET TBLPROPERTIES" else "UNSET TBLPROPERTIES"
    val parameters = Map("properties" -> (set.map(_._1) ++ removed).sorted.mkString(","))
    log.startTransaction().commit(operation, parameters) { current =>
      val snap = current.getOrElse(throw IndexTablesErrors.tableNotFound(path))
      val config = snap.metadata.configuration
      set.foreach { case (k, v) =>
        if (isIndexing(k) && !config.get(k).contains(v))
          throw IndexTablesErrors.indexingPropertyAltered(table, k)
      }
      removed.filter(isIndexing).foreach(k =>
        throw IndexTablesErrors.indexingPropertyAltered(table, k))
      Seq(snap.metadata.copy(configuration = config -- removed ++ set))
    }
    ()
  }

  private def describe(change: TableChange): String = change match {
    case _: TableChange.AddColumn => "ADD COLUMN"
    case _: TableChange.DeleteColumn => "DROP COLUMN"
    case _: TableChange.RenameColumn => "RENAME COLUMN"
    case _: TableChange.UpdateColumnType => "ALTER COLUMN TYPE"
    case _: TableChange.UpdateColumnComment => "ALTER COLUMN COMMENT"
    case _: TableChange.UpdateColumnNullability => "ALTER COLUMN NULLABILITY"
    case other => other.getClass.getSimpleName
  }
}

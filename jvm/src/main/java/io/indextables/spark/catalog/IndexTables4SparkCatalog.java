package io.indextables.spark.catalog;

import java.util.Map;

import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.DelegatingCatalogExtension;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.StagingTableCatalog;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

import io.indextables.spark.SparkLineGate;

/**
 * The session catalog with IndexTables tables ({@code spark.sql.catalog.spark_catalog}): the Java
 * front of {@link IndexTables4SparkCatalogImpl}, which Spark loads by name. It links on every
 * Spark line, so that with a JAR of the other line its {@link #initialize} fails naming both
 * versions ({@link SparkLineGate}) instead of the class failing to load. The methods the Scala
 * catalog overrides go to it; every other one goes, as the Scala catalog's would, to the session
 * catalog both wrap.
 */
public class IndexTables4SparkCatalog extends DelegatingCatalogExtension
    implements StagingTableCatalog {

  private DelegatingCatalogExtension impl;
  private boolean implDelegates = false;

  @Override
  public void initialize(String name, CaseInsensitiveStringMap options) {
    impl = (DelegatingCatalogExtension)
        SparkLineGate.newScalaInstance("io.indextables.spark.catalog.IndexTables4SparkCatalogImpl");
    impl.initialize(name, options);
  }

  /** The Scala catalog, wrapping the session catalog Spark gave this front. */
  private synchronized DelegatingCatalogExtension impl() {
    if (impl == null) {
      throw SparkLineGate.internalError("the IndexTables catalog was used before initialize");
    }
    if (!implDelegates && delegate != null) {
      impl.setDelegateCatalog(delegate);
      implDelegates = true;
    }
    return impl;
  }

  private StagingTableCatalog staging() {
    return (StagingTableCatalog) impl();
  }

  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    return impl().loadTable(ident);
  }

  @Override
  public Table loadTable(Identifier ident, String version) throws NoSuchTableException {
    return impl().loadTable(ident, version);
  }

  @Override
  public Table loadTable(Identifier ident, long timestamp) throws NoSuchTableException {
    return impl().loadTable(ident, timestamp);
  }

  @Override
  public boolean tableExists(Identifier ident) {
    return impl().tableExists(ident);
  }

  @Override
  public Table createTable(
      Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    return impl().createTable(ident, schema, partitions, properties);
  }

  @Override
  public Table createTable(
      Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    return impl().createTable(ident, columns, partitions, properties);
  }

  @Override
  public StagedTable stageCreate(
      Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    return staging().stageCreate(ident, schema, partitions, properties);
  }

  @Override
  public StagedTable stageReplace(
      Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws NoSuchNamespaceException, NoSuchTableException {
    return staging().stageReplace(ident, schema, partitions, properties);
  }

  @Override
  public StagedTable stageCreateOrReplace(
      Identifier ident, StructType schema, Transform[] partitions, Map<String, String> properties)
      throws NoSuchNamespaceException {
    return staging().stageCreateOrReplace(ident, schema, partitions, properties);
  }

  @Override
  public boolean dropTable(Identifier ident) {
    return impl().dropTable(ident);
  }

  @Override
  public boolean purgeTable(Identifier ident) {
    return impl().purgeTable(ident);
  }

  @Override
  public Table alterTable(Identifier ident, TableChange... changes) throws NoSuchTableException {
    return impl().alterTable(ident, changes);
  }
}

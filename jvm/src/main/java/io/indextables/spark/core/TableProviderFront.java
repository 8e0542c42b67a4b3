package io.indextables.spark.core;

import java.util.Map;

import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.SaveMode;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableProvider;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.sources.BaseRelation;
import org.apache.spark.sql.sources.CreatableRelationProvider;
import org.apache.spark.sql.sources.DataSourceRegister;
import org.apache.spark.sql.sources.StreamSinkProvider;
import org.apache.spark.sql.types.StructType;
import org.apache.spark.sql.util.CaseInsensitiveStringMap;

import io.indextables.spark.SparkLineGate;

/**
 * The data source's front, in Java: what Spark's service loader instantiates for every
 * {@code format(...)} lookup, IndexTables' or not. It links on every Spark line, so that a JAR
 * of the other line on the class path does not break Parquet reads (a provider that fails to
 * load fails every lookup). Each call but {@link #shortName} passes {@link SparkLineGate} and is
 * then served by one {@link IndexTables4SparkTableSource}, in Scala, loaded by name on first
 * use. The stream sink's method, whose Scala collection type differs between Scala 2.12 and
 * 2.13, is the line's own ({@link IndexTables4SparkTableProvider}).
 */
abstract class TableProviderFront
    implements TableProvider, DataSourceRegister, CreatableRelationProvider, StreamSinkProvider {

  /** The format's short name, {@code format("indextables")}: the one place it is spelled. */
  static final String SHORT_NAME = "indextables";

  private Object source;

  /** The Scala source behind this front, made once the Spark line is checked. */
  protected final synchronized Object source() {
    if (source == null) {
      source = SparkLineGate.newScalaInstance("io.indextables.spark.core.IndexTables4SparkTableSource");
    }
    return source;
  }

  @Override
  public String shortName() {
    return SHORT_NAME;
  }

  @Override
  public boolean supportsExternalMetadata() {
    return true;
  }

  @Override
  public StructType inferSchema(CaseInsensitiveStringMap options) {
    return ((TableProvider) source()).inferSchema(options);
  }

  @Override
  public Transform[] inferPartitioning(CaseInsensitiveStringMap options) {
    return ((TableProvider) source()).inferPartitioning(options);
  }

  @Override
  public Table getTable(
      StructType schema, Transform[] partitioning, Map<String, String> properties) {
    return ((TableProvider) source()).getTable(schema, partitioning, properties);
  }

  @Override
  public BaseRelation createRelation(
      SQLContext sqlContext,
      SaveMode mode,
      scala.collection.immutable.Map<String, String> parameters,
      Dataset<Row> data) {
    return ((CreatableRelationProvider) source()).createRelation(sqlContext, mode, parameters, data);
  }
}

package io.indextables.spark.extensions;

import io.indextables.spark.SparkLineGate;
import org.apache.spark.sql.SparkSessionExtensions;

import scala.Function1;
import scala.runtime.BoxedUnit;

/**
 * The IndexTables SQL extensions; enable with
 * {@code spark.sql.extensions=io.indextables.spark.extensions.IndexTables4SparkExtensions}.
 * Written in Java so that it links on every Spark line: on a session of another line than the
 * JAR's it fails the session's start with {@code INDEXTABLES_WRONG_SPARK_VERSION}
 * ({@link SparkLineGate}) before any Scala class of the JAR is loaded; otherwise it applies
 * {@link IndexTablesSessionExtensions}, loaded by name.
 */
public class IndexTables4SparkExtensions implements Function1<SparkSessionExtensions, BoxedUnit> {

  @SuppressWarnings("unchecked")
  @Override
  public BoxedUnit apply(SparkSessionExtensions extensions) {
    Object impl =
        SparkLineGate.newScalaInstance("io.indextables.spark.extensions.IndexTablesSessionExtensions");
    ((Function1<SparkSessionExtensions, BoxedUnit>) impl).apply(extensions);
    return BoxedUnit.UNIT;
  }
}

package io.indextables.spark.core;

import org.apache.spark.sql.SQLContext;
import org.apache.spark.sql.execution.streaming.Sink;
import org.apache.spark.sql.sources.StreamSinkProvider;
import org.apache.spark.sql.streaming.OutputMode;

/**
 * The data source registered as {@code indextables} ({@link TableProviderFront}), with the stream
 * sink's method of this line's Scala (scala.collection.immutable.Seq).
 */
public class IndexTables4SparkTableProvider extends TableProviderFront {

  @Override
  public Sink createSink(
      SQLContext sqlContext,
      scala.collection.immutable.Map<String, String> parameters,
      scala.collection.immutable.Seq<String> partitionColumns,
      OutputMode outputMode) {
    return ((StreamSinkProvider) source())
        .createSink(sqlContext, parameters, partitionColumns, outputMode);
  }
}

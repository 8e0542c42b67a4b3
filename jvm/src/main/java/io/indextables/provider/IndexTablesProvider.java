package io.indextables.provider;

import io.indextables.spark.core.IndexTables4SparkTableProvider;

/**
 * Upstream IndexTables' class name of the data source, so that jobs written for it
 * ({@code format("io.indextables.provider.IndexTablesProvider")},
 * {@code USING io.indextables.provider...}) run unchanged. The short name {@code indextables}
 * is registered by the class it extends only.
 */
public class IndexTablesProvider extends IndexTables4SparkTableProvider {}

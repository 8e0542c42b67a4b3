package io.indextables.provider

import io.indextables.spark.core.IndexTables4SparkTableProvider

/**
 * Upstream IndexTables' class name of the data source, so that jobs written for it
 * (`format("io.indextables.provider.IndexTablesProvider")`, `USING io.indextables.provider...`)
 * run unchanged. The short name `indextables` is registered by the class it extends only.
 */
class IndexTablesProvider extends IndexTables4SparkTableProvider

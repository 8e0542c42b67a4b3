package io.indextables.extensions

import io.indextables.spark.extensions.IndexTables4SparkExtensions

/** Upstream IndexTables' class name of the session extensions (`spark.sql.extensions`). */
class IndexTablesSparkExtensions extends IndexTables4SparkExtensions

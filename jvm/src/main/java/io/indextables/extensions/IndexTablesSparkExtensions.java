package io.indextables.extensions;

import io.indextables.spark.extensions.IndexTables4SparkExtensions;

/** Upstream IndexTables' class name of the session extensions ({@code spark.sql.extensions}). */
public class IndexTablesSparkExtensions extends IndexTables4SparkExtensions {}

package io.indextables.catalog;

import io.indextables.spark.catalog.IndexTables4SparkCatalog;

/** Upstream IndexTables' class name of the session catalog ({@code spark.sql.catalog.spark_catalog}). */
public class IndexTablesCatalog extends IndexTables4SparkCatalog {}

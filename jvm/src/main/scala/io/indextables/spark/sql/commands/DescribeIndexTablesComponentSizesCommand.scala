package io.indextables.spark.sql.commands

import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference}
import org.apache.spark.sql.execution.command.LeafRunnableCommand
import org.apache.spark.sql.types.{LongType, MapType, StringType}
import org.apache.spark.sql.{Row, SparkSession}

import io.indextables.spark.read.SplitPrewarm

/**
 * `DESCRIBE INDEXTABLES COMPONENT SIZES '<path>' | <table> [WHERE <partition predicate>]`: how
 * the index of each live split divides into fields and components (term dictionary, postings,
 * positions, fast fields, field norms, document store), measured by tantivy4java on the
 * executors that read the splits. One row per split, field and component: split_path string,
 * partition_values map<string,string>, field string (null for a split-wide total), component
 * string, size_bytes long.
 */
case class DescribeIndexTablesComponentSizesCommand(
    target: IndexTablesCommandTarget,
    where: Option[String])
    extends LeafRunnableCommand {

  override val output: Seq[Attribute] = Seq(
    AttributeReference("split_path", StringType, nullable = false)(),
    AttributeReference("partition_values", MapType(StringType, StringType))(),
    AttributeReference("field", StringType)(),
    AttributeReference("component", StringType, nullable = false)(),
    AttributeReference("size_bytes", LongType, nullable = false)()
  )

  override def run(spark: SparkSession): Seq[Row] = {
    val scan = target.plannedScan(spark, where, "DESCRIBE INDEXTABLES COMPONENT SIZES")
    val plan = scan.readPlan
    val groups = scan.splitGroups.filter(_.splits.nonEmpty)
    if (groups.isEmpty) Nil
    else {
      val sizes = spark.sparkContext.makeRDD(groups.map(g => (g.splits, g.locations)))
        .flatMap(splits =>
          splits.map(s => (s.path, s.partitionValues, SplitPrewarm.componentSizes(plan, s))))
        .collect()
      sizes.toSeq.sortBy(_._1).flatMap { case (path, partitionValues, bySize) =>
        bySize.toSeq.sortBy(_._1).map { case (key, bytes) =>
          val (field, component) =
            if (key.startsWith("_")) (null, key.stripPrefix("_"))
            else key.lastIndexOf('.') match {
              case -1 => (null, key)
              case i => (key.substring(0, i), key.substring(i + 1))
            }
          Row(path, partitionValues, field, component, bytes)
        }
      }
    }
  }
}

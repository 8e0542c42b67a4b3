# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # IndexTables quick start
#
# Write a table of log lines to S3 (the `s3` service, moto) and to Azure Blob Storage (the
# `azurite` service), then search it with `indexquery`, from SQL and from the Python functions.
# In the image, JupyterLab opens this file as a notebook; `python quickstart.py` runs it whole.
# The endpoints come from the environment docker/compose.yaml sets.

# %%
from __future__ import annotations

import os
import uuid

import boto3
from azure.storage.blob import BlobServiceClient
from pyspark.sql import SparkSession
from pyspark.sql import functions as F

import indextables
from indextables.functions import indexquery, textsearch

S3_ENDPOINT = os.environ.get("INDEXTABLES_S3_ENDPOINT", "http://s3:5000")
AWS_KEY = os.environ.get("AWS_ACCESS_KEY_ID", "testing")
AWS_SECRET = os.environ.get("AWS_SECRET_ACCESS_KEY", "testing")
AWS_REGION = os.environ.get("AWS_REGION", "us-east-1")
AZURE = os.environ.get(
    "INDEXTABLES_AZURE_CONNECTION_STRING",
    "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;"
    "AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/"
    "KBHBeksoGMGw==;BlobEndpoint=http://azurite:10000/devstoreaccount1;",
)
ACCOUNT = dict(p.split("=", 1) for p in AZURE.split(";") if "=" in p)["AccountName"]

# %% [markdown]
# A session with the plugin (`configure_spark` adds the JAR the wheel ships) and the storage
# settings of both servers.

# %%
spark = indextables.configure_spark(
    SparkSession.builder.master("local[2]")
    .appName("indextables-quickstart")
    .config("spark.sql.shuffle.partitions", "2")
    .config("spark.indextables.aws.accessKey", AWS_KEY)
    .config("spark.indextables.aws.secretKey", AWS_SECRET)
    .config("spark.indextables.aws.region", AWS_REGION)
    .config("spark.indextables.aws.endpoint", S3_ENDPOINT)
    .config("spark.indextables.aws.pathStyleAccess", "true")
    .config("spark.indextables.azure.connectionString", AZURE)
).getOrCreate()

# %% [markdown]
# A bucket and a container to write to.

# %%
bucket = f"quickstart-{uuid.uuid4().hex[:8]}"
boto3.client(
    "s3",
    endpoint_url=S3_ENDPOINT,
    region_name=AWS_REGION,
    aws_access_key_id=AWS_KEY,
    aws_secret_access_key=AWS_SECRET,
).create_bucket(Bucket=bucket)
container = f"quickstart-{uuid.uuid4().hex[:8]}"
BlobServiceClient.from_connection_string(AZURE).create_container(container)

# %% [markdown]
# Some log lines; `message` is indexed as `text` (tokenized), the other strings as exact values.

# %%
rows = [
    (
        i,
        ["INFO", "WARN", "ERROR"][i % 3],
        f"request {i} " + ["served", "timed out", "reset"][i % 4 % 3],
    )
    for i in range(1000)
]
logs = spark.createDataFrame(rows, "id long, level string, message string")
tables = {
    "s3": f"s3://{bucket}/logs",
    "azure": f"abfss://{container}@{ACCOUNT}.dfs.core.windows.net/logs",
}
for url in tables.values():
    (
        logs.write.format("indextables")
        .option("spark.indextables.indexing.typemap.message", "text")
        .save(url)
    )

# %% [markdown]
# Search: SQL's `indexquery` operator, and the same predicate as a Column.

# %%
expected = logs.filter(F.col("message").contains("timed out") & (F.col("level") == "ERROR")).count()
for store, url in tables.items():
    by_sql = spark.sql(
        f"SELECT COUNT(*) FROM indextables.`{url}` "
        "WHERE message indexquery '\"timed out\"' AND level = 'ERROR'"
    ).collect()[0][0]
    table = spark.read.format("indextables").load(url)
    by_column = table.filter(
        textsearch("message", '"timed out"') & (F.col("level") == "ERROR")
    ).count()
    print(f"{store}: {by_sql} rows by SQL, {by_column} by the Column API, {expected} expected")
    assert by_sql == by_column == expected

# %%
spark.read.format("indextables").load(tables["s3"]).filter(
    indexquery("message", "reset OR served") & ~(F.col("level") == "INFO")
).show(5)

# %%
print("quickstart: OK")
spark.stop()

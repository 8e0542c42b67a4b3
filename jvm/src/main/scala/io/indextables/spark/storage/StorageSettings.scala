package io.indextables.spark.storage

import java.util.Locale

import org.apache.hadoop.conf.Configuration

/**
 * The names of the object-store settings (upstream IndexTables' keys). The driver resolves them
 * (a read/write option over the session configuration), validates them and writes them, under
 * these exact names and with sizes in bytes, into the Hadoop configuration that travels with a
 * read or a write. The stores read them from there, on the driver and on the executors alike.
 */
object StorageKeys {
  val AwsAccessKey = "spark.indextables.aws.accessKey"
  val AwsSecretKey = "spark.indextables.aws.secretKey"
  val AwsSessionToken = "spark.indextables.aws.sessionToken"
  val AwsRegion = "spark.indextables.aws.region"
  val AwsEndpoint = "spark.indextables.aws.endpoint"
  val AwsPathStyleAccess = "spark.indextables.aws.pathStyleAccess"
  val AwsCredentialsProviderClass = "spark.indextables.aws.credentialsProviderClass"
  val S3PartSize = "spark.indextables.s3.partSize"
  val S3MultipartThreshold = "spark.indextables.s3.multipartThreshold"
  val S3MaxConcurrency = "spark.indextables.s3.maxConcurrency"

  val AzureAccountName = "spark.indextables.azure.accountName"
  val AzureAccountKey = "spark.indextables.azure.accountKey"
  val AzureConnectionString = "spark.indextables.azure.connectionString"
  val AzureTenantId = "spark.indextables.azure.tenantId"
  val AzureClientId = "spark.indextables.azure.clientId"
  val AzureClientSecret = "spark.indextables.azure.clientSecret"
  val AzureBearerToken = "spark.indextables.azure.bearerToken"
  val AzureBlockSize = "spark.indextables.azure.blockSize"
  val AzureMaxConcurrency = "spark.indextables.azure.maxConcurrency"

  val SplitCacheDirectory = "spark.indextables.cache.directoryPath"
  val SplitCacheMaxSize = "spark.indextables.splitCache.maxSize"

  /** Settings whose values are secrets: never printed, logged or recorded. */
  val Secrets: Seq[String] = Seq(
    AwsSecretKey,
    AwsSessionToken,
    AzureAccountKey,
    AzureConnectionString,
    AzureClientSecret,
    AzureBearerToken)

  /** Hadoop's own names of secrets this plugin reads as fallbacks. */
  val HadoopSecrets: Seq[String] = Seq("fs.s3a.secret.key", "fs.s3a.session.token")

  /** Whether the setting `key` holds a secret (compared ignoring case). */
  def isSecret(key: String): Boolean = {
    val k = key.toLowerCase(Locale.ROOT)
    (Secrets ++ HadoopSecrets).exists(_.toLowerCase(Locale.ROOT) == k) ||
    k.startsWith("fs.azure.account.key.") || k.startsWith("fs.azure.sas.")
  }
}

/** Reads settings from a Hadoop configuration: the first of `keys` that is set and not blank. */
private[storage] object ConfReader {
  def first(conf: Configuration, keys: String*): Option[String] =
    keys.iterator.map(k => conf.getTrimmed(k)).find(v => v != null && v.nonEmpty)
}

/**
 * How to reach S3. Credentials come from, in order: the `spark.indextables.aws.*` keys, the
 * Hadoop `fs.s3a.*` keys, a credentials provider class, then the AWS SDK's default chain.
 * Equal settings are equal values, so that one client serves every table that shares them.
 */
final case class AwsSettings(
    accessKey: Option[String],
    secretKey: Option[String],
    sessionToken: Option[String],
    region: Option[String],
    endpoint: Option[String],
    pathStyleAccess: Boolean,
    credentialsProviderClass: Option[String],
    partSize: Long,
    multipartThreshold: Long,
    maxConcurrency: Int) {

  // Secrets stay out of every string this value makes.
  override def toString: String =
    s"AwsSettings(region=${region.getOrElse("default")}, endpoint=${endpoint.getOrElse("default")}, " +
      s"pathStyleAccess=$pathStyleAccess, credentials=${credentialSource})"

  def credentialSource: String =
    if (accessKey.isDefined) "static keys"
    else credentialsProviderClass.map(c => s"provider $c").getOrElse("default chain")
}

object AwsSettings {
  val DefaultPartSize: Long = 64L << 20
  val DefaultMaxConcurrency = 4

  def apply(conf: Configuration): AwsSettings = {
    import StorageKeys._
    def get(keys: String*): Option[String] = ConfReader.first(conf, keys: _*)
    val partSize = get(S3PartSize).map(_.toLong).getOrElse(DefaultPartSize)
    AwsSettings(
      accessKey = get(AwsAccessKey, "fs.s3a.access.key"),
      secretKey = get(AwsSecretKey, "fs.s3a.secret.key"),
      sessionToken = get(AwsSessionToken, "fs.s3a.session.token"),
      region = get(AwsRegion, "fs.s3a.endpoint.region"),
      endpoint = get(AwsEndpoint, "fs.s3a.endpoint").map { e =>
        if (e.contains("://")) e else s"https://$e"
      },
      pathStyleAccess = get(AwsPathStyleAccess, "fs.s3a.path.style.access")
        .exists(_.equalsIgnoreCase("true")),
      credentialsProviderClass = get(AwsCredentialsProviderClass),
      partSize = partSize,
      multipartThreshold = get(S3MultipartThreshold).map(_.toLong).getOrElse(partSize),
      maxConcurrency = get(S3MaxConcurrency).map(_.toInt).getOrElse(DefaultMaxConcurrency)
    )
  }
}

/**
 * How to reach Azure Blob Storage. Credentials come from, in order: a connection string, an
 * account key (`spark.indextables.azure.accountKey`, then Hadoop's
 * `fs.azure.account.key.<account>.*`), a bearer token, a service principal (tenant, client id
 * and secret), then the Azure SDK's default chain.
 */
final case class AzureSettings(
    accountName: Option[String],
    accountKey: Option[String],
    connectionString: Option[String],
    tenantId: Option[String],
    clientId: Option[String],
    clientSecret: Option[String],
    bearerToken: Option[String],
    hadoopAccountKeys: Map[String, String],
    blockSize: Long,
    maxConcurrency: Int) {

  override def toString: String =
    s"AzureSettings(account=${accountName.getOrElse("from path")}, credentials=$credentialSource)"

  def credentialSource: String =
    if (connectionString.isDefined) "connection string"
    else if (accountKey.isDefined || hadoopAccountKeys.nonEmpty) "account key"
    else if (bearerToken.isDefined) "bearer token"
    else if (clientSecret.isDefined) "service principal"
    else "default chain"

  /** The account key for `account`: the plugin's key, else Hadoop's key for that account. */
  def keyFor(account: String): Option[String] =
    accountKey.orElse(hadoopAccountKeys.collectFirst {
      case (host, key)
          if host.toLowerCase(Locale.ROOT).startsWith(
            account.toLowerCase(Locale.ROOT) + ".") =>
        key
    })
}

object AzureSettings {
  val DefaultBlockSize: Long = 8L << 20
  val DefaultMaxConcurrency = 4
  private val HadoopKeyPrefix = "fs.azure.account.key."

  def apply(conf: Configuration): AzureSettings = {
    import StorageKeys._
    import scala.collection.JavaConverters._
    def get(keys: String*): Option[String] = ConfReader.first(conf, keys: _*)
    val hadoopKeys = conf.getPropsWithPrefix(HadoopKeyPrefix).asScala.toMap
      .filter(_._2.trim.nonEmpty)
    AzureSettings(
      accountName = get(AzureAccountName),
      accountKey = get(AzureAccountKey),
      connectionString = get(AzureConnectionString),
      tenantId = get(AzureTenantId),
      clientId = get(AzureClientId),
      clientSecret = get(AzureClientSecret),
      bearerToken = get(AzureBearerToken),
      hadoopAccountKeys = hadoopKeys,
      blockSize = get(AzureBlockSize).map(_.toLong).getOrElse(DefaultBlockSize),
      maxConcurrency = get(AzureMaxConcurrency).map(_.toInt).getOrElse(DefaultMaxConcurrency)
    )
  }
}

package io.indextables.spark.storage

import java.util.Locale

import org.apache.hadoop.conf.Configuration

import io.indextables.spark.config.{ConfEntry, IndexTablesConf, IndexTablesOptions}

/**
 * The object-store settings of a Hadoop configuration, through the one resolver: the driver
 * resolves the `spark.indextables.*` storage keys (`IndexTablesOptions.storageSettings`: an
 * option over the session configuration) and writes them, under their exact names, into the
 * Hadoop configuration that travels with a read or a write; the stores read them back here, on
 * the driver and the executors alike, with the registry's types, defaults and validation.
 */
private[spark] object StorageConf {

  /** The storage entries `conf` sets (blank values count as not set). */
  def apply(conf: Configuration): IndexTablesOptions =
    IndexTablesOptions(IndexTablesConf.storageEntries.flatMap(e => e.key +: e.aliases).flatMap {
      k => hadoop(conf, k).map(k -> _)
    }.toMap)

  /** The first of Hadoop's own `keys` that `conf` sets, not blank. */
  def hadoop(conf: Configuration, keys: String*): Option[String] =
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

  def apply(conf: Configuration): AwsSettings = {
    import IndexTablesConf._
    val opts = StorageConf(conf)
    // The plugin's setting, else Hadoop's own key.
    def get(entry: ConfEntry[String], hadoopKey: String*): Option[String] =
      opts.getOption(entry).filter(_.nonEmpty).orElse(StorageConf.hadoop(conf, hadoopKey: _*))
    val partSize = opts.get(S3PartSize)
    AwsSettings(
      accessKey = get(AwsAccessKey, "fs.s3a.access.key"),
      secretKey = get(AwsSecretKey, "fs.s3a.secret.key"),
      sessionToken = get(AwsSessionToken, "fs.s3a.session.token"),
      region = get(AwsRegion, "fs.s3a.endpoint.region"),
      endpoint = get(AwsEndpoint, "fs.s3a.endpoint").map { e =>
        if (e.contains("://")) e else s"https://$e"
      },
      pathStyleAccess = opts.getOption(AwsPathStyleAccess).getOrElse(
        StorageConf.hadoop(conf, "fs.s3a.path.style.access").exists(_.equalsIgnoreCase("true"))),
      credentialsProviderClass = get(AwsCredentialsProviderClass),
      partSize = partSize,
      multipartThreshold = opts.getOption(S3MultipartThreshold).getOrElse(partSize),
      maxConcurrency = opts.get(S3MaxConcurrency)
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
  private val HadoopKeyPrefix = "fs.azure.account.key."

  def apply(conf: Configuration): AzureSettings = {
    import IndexTablesConf._
    import scala.jdk.CollectionConverters._
    val opts = StorageConf(conf)
    def get(entry: ConfEntry[String]): Option[String] = opts.getOption(entry).filter(_.nonEmpty)
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
      blockSize = opts.get(AzureBlockSize),
      maxConcurrency = opts.get(AzureMaxConcurrency)
    )
  }
}

package io.indextables.spark.util

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, DataInputStream, DataOutputStream, ObjectInputStream, ObjectOutputStream}
import java.util.UUID

import org.apache.hadoop.conf.Configuration

/**
 * A Hadoop Configuration that travels from the driver to executors inside task closures.
 *
 * Every task of a scan deserializes its own copy of the closure, and rebuilding a Configuration
 * of a thousand entries costs milliseconds, which on small splits was half of a task's time. So
 * the configuration travels in its serialized form, and each JVM decodes a given form once and
 * hands the same instance to every task that carries it. That instance is shared: readers must
 * not modify it.
 */
final class SerializableHadoopConf(@transient private var conf: Configuration)
    extends Serializable {

  def value: Configuration = conf

  private def writeObject(out: ObjectOutputStream): Unit = {
    out.defaultWriteObject()
    val bytes = SerializableHadoopConf.encode(conf)
    out.writeUTF(UUID.nameUUIDFromBytes(bytes).toString)
    out.writeInt(bytes.length)
    out.write(bytes)
  }

  private def readObject(in: ObjectInputStream): Unit = {
    in.defaultReadObject()
    val digest = in.readUTF()
    val bytes = new Array[Byte](in.readInt())
    in.readFully(bytes)
    conf =
      SerializableHadoopConf.decoded.getOrElseUpdate(digest)(SerializableHadoopConf.decode(bytes))
  }
}

object SerializableHadoopConf {

  // Decoded configurations by the digest of their serialized form: every task shares one.
  private val decoded = new BoundedCache[String, Configuration](8)

  private def encode(conf: Configuration): Array[Byte] = {
    val buffer = new ByteArrayOutputStream()
    val out = new DataOutputStream(buffer)
    conf.write(out)
    out.flush()
    buffer.toByteArray
  }

  private def decode(bytes: Array[Byte]): Configuration = {
    val conf = new Configuration(false)
    conf.readFields(new DataInputStream(new ByteArrayInputStream(bytes)))
    conf
  }
}

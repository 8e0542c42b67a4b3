package io.indextables.spark.util

import java.io.{ByteArrayInputStream, ByteArrayOutputStream, ObjectInputStream, ObjectOutputStream}

import org.apache.hadoop.conf.Configuration
import org.scalatest.funsuite.AnyFunSuite

class SerializableHadoopConfSuite extends AnyFunSuite {

  private def roundTrip(c: SerializableHadoopConf): SerializableHadoopConf = {
    val bytes = new ByteArrayOutputStream()
    val out = new ObjectOutputStream(bytes)
    out.writeObject(c)
    out.close()
    new ObjectInputStream(new ByteArrayInputStream(bytes.toByteArray)).readObject()
      .asInstanceOf[SerializableHadoopConf]
  }

  private def conf(entries: (String, String)*): Configuration = {
    val c = new Configuration(false)
    entries.foreach { case (k, v) => c.set(k, v) }
    c
  }

  test("a configuration travels whole, and equal ones decode once per JVM into one instance") {
    val a = roundTrip(new SerializableHadoopConf(conf("fs.x.impl" -> "X", "k" -> "v")))
    assert(a.value.get("fs.x.impl") === "X" && a.value.get("k") === "v")
    val b = roundTrip(new SerializableHadoopConf(conf("fs.x.impl" -> "X", "k" -> "v")))
    assert(b.value eq a.value)
  }

  test("different configurations never share an instance") {
    val a = roundTrip(new SerializableHadoopConf(conf("k" -> "one")))
    val b = roundTrip(new SerializableHadoopConf(conf("k" -> "two")))
    assert(a.value.get("k") === "one" && b.value.get("k") === "two")
  }
}

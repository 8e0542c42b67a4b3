package io.indextables.spark.schema

import org.scalatest.funsuite.AnyFunSuite

class IpAddressesSuite extends AnyFunSuite {

  test("the canonical spelling is the one tantivy gives back; anything else is not an address") {
    assert(IpAddresses.canonical("10.0.0.1") === Some("10.0.0.1"))
    assert(IpAddresses.canonical("010.0.0.1") === Some("10.0.0.1"))
    assert(IpAddresses.canonical("2001:0DB8:0:0:0:0:0:1") === Some("2001:db8::1"))
    assert(IpAddresses.canonical("2001:db8:0:1:0:0:0:1") === Some("2001:db8:0:1::1"))
    assert(IpAddresses.canonical("2001:db8:0:0:1:0:0:1") === Some("2001:db8::1:0:0:1"))
    assert(IpAddresses.canonical("::") === Some("::"))
    assert(Seq("256.0.0.1", "10.0.0", "host.example", "10.0.0.1/24", "", "1::2::3")
      .forall(IpAddresses.canonical(_).isEmpty))
  }

  test("a CIDR block is the range of its first and last addresses") {
    assert(IpAddresses.cidrRange("10.1.2.3/24") === Some(("10.1.2.0", "10.1.2.255")))
    assert(IpAddresses.cidrRange("10.0.0.0/8") === Some(("10.0.0.0", "10.255.255.255")))
    assert(IpAddresses.cidrRange("192.168.1.7/32") === Some(("192.168.1.7", "192.168.1.7")))
    assert(IpAddresses.cidrRange("2001:db8::/32") ===
      Some(("2001:db8::", "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff")))
    assert(IpAddresses.cidrRange("10.0.0.0/33").isEmpty)
    assert(IpAddresses.cidrRange("10.0.0.0").isEmpty)
  }
}

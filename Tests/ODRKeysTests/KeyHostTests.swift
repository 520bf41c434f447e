import ODRKeyFormat
import Testing

/// Where a key may go, as one rule for the networking wrapper and the
/// proxy: hosts, ports, and plain http.
@Suite struct KeyHostTests {
  @Test(arguments: [
    ("api.example", "api.example", nil), ("localhost:8080", "localhost", 8080), ("127.0.0.1:1", "127.0.0.1", 1), ("10.0.0.2:65535", "10.0.0.2", 65535),
  ] as [(String, String, Int?)])
  func anEntryIsAHostAndMaybeAPort(_ entry: String, _ name: String, _ port: Int?) {
    let host = KeyHost(entry)
    #expect(host?.name == name && host?.port == port && host?.description == entry && host?.isSuffix == false)
  }

  @Test(arguments: [(".amazonaws.com", "amazonaws.com", nil), (".localhost:9000", "localhost", 9000)] as [(String, String, Int?)])
  func aDotStartsASuffixEntry(_ entry: String, _ name: String, _ port: Int?) {
    let host = KeyHost(entry)
    #expect(host?.name == name && host?.port == port && host?.isSuffix == true && host?.description == entry)
  }

  @Test(arguments: ["", "API.example", "api.example:", "api.example:0", "api.example:65536", "api.example:08", "http://api.example", "api.example/x",
                    "[::1]:80", "a..b", "-a.example", "localhost:80:80", "host:+80", ".", "..example", ".127.0.0.1", ".-a.example", ".com", ".internal:443"])
  func anythingElseIsNotAnEntry(_ entry: String) {
    #expect(KeyHost(entry) == nil)
  }

  @Test(arguments: [
    // (hosts, insecure, scheme, host, port, allowed, why)
    (["api.example"], false, "https", "api.example", 443, true, "https: a port-less entry covers every port"),
    (["api.example"], false, "https", "api.example", 8443, true, "https: another port, the certificate still proves the host"),
    (["api.example:443"], false, "https", "api.example", 8443, false, "https: an entry with a port covers that port only"),
    (["api.example"], false, "https", "evil.example", 443, false, "another host"),
    (["127.0.0.1"], false, "http", "127.0.0.1", 8080, false, "plain http to loopback: only to a port an entry names"),
    (["127.0.0.1:8080"], false, "http", "127.0.0.1", 8080, true, "plain http to a named loopback port"),
    (["127.0.0.1:8080"], false, "http", "127.0.0.1", 9090, false, "plain http to another loopback port (another user's listener)"),
    (["localhost:8080"], false, "http", "LOCALHOST", 8080, true, "host names compare in lower case"),
    (["api.example:80"], false, "http", "api.example", 80, false, "plain http off loopback"),
    (["api.example:80"], true, "http", "api.example", 80, true, "plain http off loopback where the key says insecure"),
    (["api.example"], true, "http", "api.example", 80, false, "insecure, still only to a named port"),
    (["api.example"], false, "ftp", "api.example", 21, false, "not http"),
    ([".amazonaws.com"], false, "https", "bucket.s3.eu-west-1.amazonaws.com", 443, true, "a suffix entry: any name under it"),
    ([".amazonaws.com"], false, "https", "amazonaws.com", 443, false, "a suffix entry: not the domain itself"),
    ([".amazonaws.com"], false, "https", "evilamazonaws.com", 443, false, "a suffix entry: a name that only ends the same"),
    ([".localhost:9000"], false, "http", "bucket.localhost", 9000, false, "plain http to a name under localhost: not known to be loopback (DNS may answer)"),
    ([".localhost:9000"], true, "http", "bucket.localhost", 9000, true, "a suffix entry with a port, plain http where the key says insecure"),
    ([".localhost:9000"], true, "http", "bucket.localhost", 9001, false, "a suffix entry with a port: that port only"),
  ] as [([String], Bool, String, String, Int, Bool, String)])
  func theRule(hosts: [String], insecure: Bool, scheme: String, host: String, port: Int, allowed: Bool, why: String) {
    #expect((KeyHost.refusal(hosts: hosts, insecure: insecure, scheme: scheme, host: host, port: port) == nil) == allowed, "\(why)")
  }
}

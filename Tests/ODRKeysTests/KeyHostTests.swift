import ODRKeys
import Testing

/// Where a key may go, as one rule for the networking wrapper and the
/// proxy: hosts, ports, and plain http.
@Suite struct KeyHostTests {
  @Test(arguments: [
    ("api.example", "api.example", nil), ("localhost:8080", "localhost", 8080), ("127.0.0.1:1", "127.0.0.1", 1), ("10.0.0.2:65535", "10.0.0.2", 65535),
  ] as [(String, String, Int?)])
  func anEntryIsAHostAndMaybeAPort(_ entry: String, _ name: String, _ port: Int?) {
    let host = KeyHost(entry)
    #expect(host?.name == name && host?.port == port && host?.description == entry)
  }

  @Test(arguments: ["", "API.example", "api.example:", "api.example:0", "api.example:65536", "api.example:08", "http://api.example", "api.example/x",
                    "[::1]:80", "a..b", "-a.example", "localhost:80:80", "host:+80"])
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
  ] as [([String], Bool, String, String, Int, Bool, String)])
  func theRule(hosts: [String], insecure: Bool, scheme: String, host: String, port: Int, allowed: Bool, why: String) {
    #expect((KeyHost.refusal(hosts: hosts, insecure: insecure, scheme: scheme, host: host, port: port) == nil) == allowed, "\(why)")
  }
}

import ArgumentParser
import FoundationEssentials
import ODRResources

extension ODR {
  /// `odr pack SRC --output DIR`: publishes a folder as a static catalog.
  struct Pack: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Publish a folder of tagged files as a static catalog (catalog.json + blobs/).",
      discussion: """
        SRC holds tags.json, which names each tag's category and files (folders end in '/').
        DIR receives catalog.json and blobs/<sha256>; serve it from any static host or use it
        as a file:// catalog. Packing the same folder twice gives identical bytes; a file in
        several tags is stored once.

        Example:
          odr pack resources/Demo --output /tmp/demo-catalog
          odr pack resources/Demo --output /srv/www/odr --version 4
        """
    )

    @Argument(help: "The publisher folder (holding tags.json).")
    var source: String

    @Option(name: .shortAndLong, help: "Where to write the catalog folder.")
    var output: String

    @Option(help: "The catalog version (overrides tags.json; default 1). Clients refuse older versions than they have seen.")
    var version: Int?

    @Flag(help: "Print a JSON summary.")
    var json = false

    @Flag(name: .shortAndLong, help: "Print nothing on success.")
    var quiet = false

    func validate() throws {
      if let version, version < 1 { throw ValidationError("--version must be 1 or more.") }
    }

    struct Summary: Encodable {
      struct Tag: Encodable { let name: String; let category: String; let files: Int; let bytes: Int64; let secrets: Bool }
      let bundle: String
      let version: Int
      let output: String
      let tags: [Tag]
    }

    func run() throws {
      let catalog = try Publisher(source: URL(filePath: source)).pack(to: URL(filePath: output), version: version)
      let tags = catalog.tags.sorted { $0.key < $1.key }.map {
        Summary.Tag(name: $0.key, category: $0.value.category.rawValue, files: $0.value.files.count, bytes: $0.value.size, secrets: $0.value.secrets)
      }
      if json {
        try Output.json(Summary(bundle: catalog.bundle, version: catalog.version, output: output, tags: tags))
      } else if !quiet {
        var lines = ["packed \(catalog.bundle) version \(catalog.version) into \(output)"]
        for tag in tags {
          lines.append("  \(tag.name)  \(tag.category)\(tag.secrets ? ", secrets" : "")  \(tag.files) file\(tag.files == 1 ? "" : "s"), \(tag.bytes) bytes")
        }
        Output.write(lines.joined(separator: "\n") + "\n")
      }
    }
  }
}

import Foundation
import ODRConfiguration
import ODRTesting
import Testing

/// With `CI=true` only the job's own checkout's odr.json is adopted without
/// asking (issue 54, item 9): a repository cloned inside the workspace never
/// chooses the catalog, trust, auth or endpoint.
@Suite(.enabled(if: TestSelection.untagged)) struct CheckoutRootTests {
  /// A workspace holding a nested clone, each with its own odr.json:
  /// `ws/.git`, `ws/odr.json`, `ws/deps/lib/.git`, `ws/deps/lib/odr.json`.
  final class Workspace {
    let root = FileManager.default.temporaryDirectory.appending(path: "odr-checkout-\(UUID().uuidString)")
    var top: URL { root.appending(path: "ws") }
    var nested: URL { top.appending(path: "deps/lib") }

    init() throws {
      for folder in [top, nested] {
        try FileManager.default.createDirectory(at: folder.appending(path: ".git"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: folder.appending(path: "src"), withIntermediateDirectories: true)
        try Data(#"{"catalog": "\#(folder.path)/catalog"}"#.utf8).write(to: folder.appending(path: "odr.json"))
      }
    }

    deinit { try? FileManager.default.removeItem(at: root) }
  }

  struct Row: CustomTestStringConvertible, Sendable {
    let situation: String
    /// The variables beyond `CI=true`, `HOME` and `XDG_STATE_HOME`, by the
    /// workspace folder they name ("top", "nested", "elsewhere").
    let variables: [String: String]
    /// Where odr runs: "top/src" or "nested/src".
    let runs: String
    /// The catalog adopted ("top", "nested"), or nil: the file is inert.
    let adopts: String?
    var testDescription: String { situation }
  }

  static let rows: [Row] = [
    Row(situation: "no CI variable: the repository's own checkout", variables: [:], runs: "top/src", adopts: "top"),
    Row(situation: "no CI variable: a clone inside it (the outermost repository counts)", variables: [:], runs: "nested/src", adopts: nil),
    Row(situation: "GITHUB_WORKSPACE is the checkout", variables: ["GITHUB_WORKSPACE": "top"], runs: "top/src", adopts: "top"),
    Row(situation: "GITHUB_WORKSPACE, odr run in a clone inside it", variables: ["GITHUB_WORKSPACE": "top"], runs: "nested/src", adopts: nil),
    Row(situation: "CI_PROJECT_DIR (GitLab), odr run in a clone inside it", variables: ["CI_PROJECT_DIR": "top"], runs: "nested/src", adopts: nil),
    Row(situation: "GITHUB_WORKSPACE names the clone (a job checking it out on purpose)", variables: ["GITHUB_WORKSPACE": "nested"], runs: "nested/src", adopts: "nested"),
    Row(situation: "GITHUB_WORKSPACE elsewhere: nothing here is the checkout", variables: ["GITHUB_WORKSPACE": "elsewhere"], runs: "top/src", adopts: nil),
  ]

  @Test(arguments: rows) func aCIJobAdoptsOnlyItsCheckout(_ row: Row) throws {
    let workspace = try Workspace()
    func place(_ name: String) -> URL {
      switch name {
      case "top": workspace.top
      case "nested": workspace.nested
      default: workspace.root.appending(path: name)
      }
    }
    var environment = ["CI": "true", "HOME": workspace.root.path, "XDG_STATE_HOME": workspace.root.appending(path: "state").path]
    for (name, folder) in row.variables { environment[name] = place(folder).path }
    let runs = row.runs.split(separator: "/").map(String.init)
    let folder = place(runs[0]).appending(path: runs[1])
    let configuration = try ODRConfiguration.discover(environment: environment, folder: folder)
    if let adopts = row.adopts {
      #expect(configuration.locations.map(\.path) == [place(adopts).appending(path: "catalog").path], "\(configuration.inertFile ?? "")")
    } else {
      #expect(configuration.locations.isEmpty)
      #expect(configuration.inertFile?.contains("only the job's own checkout's odr.json counts") == true, "\(configuration.inertFile ?? "nil")")
    }
  }

  /// Outside CI nothing is adopted without `odr trust adopt`, checkout or not.
  @Test func withoutCINothingIsAdoptedUnasked() throws {
    let workspace = try Workspace()
    let environment = ["HOME": workspace.root.path, "XDG_STATE_HOME": workspace.root.appending(path: "state").path,
                       "GITHUB_WORKSPACE": workspace.top.path]
    let configuration = try ODRConfiguration.discover(environment: environment, folder: workspace.top.appending(path: "src"))
    #expect(configuration.locations.isEmpty)
    #expect(configuration.inertFile?.contains("odr trust adopt") == true)
  }
}

// swift-tools-version: 6.1
// An app outside odr, as a user writes one: it depends on this checkout by
// path with odr's default trait off, and uses the one app product. Built by
// scripts/checks/app, which counts what resolving fetched.
import Foundation
import PackageDescription

// A path dependency is named after its folder: "odr" in a user's checkout,
// whatever a CI clone is called here.
let checkout = URL(fileURLWithPath: Context.packageDirectory).appendingPathComponent("../../..").standardized
let odr = checkout.lastPathComponent

let package = Package(
  name: "OutsideApp",
  dependencies: [.package(path: checkout.path, traits: [])],
  targets: [
    // Examples/WeatherClient, the same file.
    .executableTarget(name: "WeatherClient", dependencies: [.product(name: "ODRKit", package: odr)]),
    // Every Swift sample of the README, the DocC articles and the doc
    // comments of what an app links (ReadmeExamplesTests checks they are all here).
    .target(name: "Snippets", dependencies: [.product(name: "ODRKit", package: odr)]),
  ],
  swiftLanguageModes: [.v6]
)

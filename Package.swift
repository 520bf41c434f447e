// swift-tools-version: 6.1
import PackageDescription

let strictSettings: [SwiftSetting] = [
  .enableUpcomingFeature("ExistentialAny"),
  .enableUpcomingFeature("InternalImportsByDefault"),
  .enableUpcomingFeature("MemberImportVisibility"),
]
/// Test targets: built unoptimised inside the one release build. Their
/// code runs commands and compares what they print (what they test is in
/// the optimised modules and binaries); optimising it cost a clean CI
/// build about 100 s on two cores.
let testSettings = strictSettings + [.unsafeFlags(["-Onone"])]

/// odr's own tools — the CLI, its tests and benchmarks — need argument
/// parsing, the HTTP client and a test server; the libraries an app links do
/// not. Their dependencies hang on the default trait "Tools", so an app that
/// turns it off (`traits: []`) resolves only swift-crypto, swift-asn1,
/// swift-log and swift-system besides odr (README, "Use the library").
let tools: TargetDependencyCondition? = .when(traits: ["Tools"])

/// The executables users run (and the bench's cold-start peer), linked with
/// the Swift runtime inside: no Swift libraries to find and load at
/// start-up. Only their link differs; no test target depends on them (the
/// tests run the built binaries, or ODRCommandLine in process), so the one
/// release build serves the tests and the shipped binaries alike. Objects
/// built against the shared runtime name only the Swift modules they import;
/// the static archives also need what those modules would have named:
/// FoundationEssentials its shims and collections, full Foundation
/// CoreFoundation and ICU, FoundationNetworking libcurl.
func staticRuntime(_ libraries: [String]) -> [LinkerSetting] {
  [.unsafeFlags(["-static-stdlib", "-Xlinker", "--no-export-dynamic", "-Xlinker", "--as-needed"])] + libraries.map { .linkedLibrary($0) }
}
let essentials = ["_FoundationCShims", "_FoundationCollections"]
let foundation = essentials + ["CoreFoundation", "_FoundationICU", "FoundationInternationalization"]
let networking = foundation + ["_CFURLSessionInterface", "curl"]

/// The HTTP stack of odr's own network code (downloads and S3 publishing,
/// the proxy of `odr exec --proxy`): odr's HTTP/1.1 client (ODRHTTP's
/// HTTP1Client) on SwiftNIO with TLS.
let networkStack: [Target.Dependency] = [
  .product(name: "Crypto", package: "swift-crypto"),
  .product(name: "NIOCore", package: "swift-nio", condition: tools),
  .product(name: "NIOHTTP1", package: "swift-nio", condition: tools),
  .product(name: "NIOPosix", package: "swift-nio", condition: tools),
  .product(name: "NIOSSL", package: "swift-nio-ssl", condition: tools),
]

let package = Package(
  name: "odr",
  // Linux only: libsecret, /proc and Glibc are part of the design.
  products: [
    .executable(name: "odr", targets: ["odr"]),
    .executable(name: "odr-http", targets: ["odr-http"]),
    // The one library product: what an app adds — the provider, its stores,
    // APIClient, trust, configuration and resources, in one import. The
    // modules behind it are odr's own (no product): only the names
    // ODRKit/Exports.swift exports are a promise to apps.
    .library(name: "ODRKit", targets: ["ODRKit"]),
  ],
  traits: [
    .trait(name: "Tools", description: "The odr and odr-http executables, tests and benchmarks (argument parsing, the HTTP client, test servers)."),
    .default(enabledTraits: ["Tools"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    // TLS for odr's HTTP client and the proxy; named so its errors are told apart by type.
    .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
    // odr exec --proxy: the run's certificate authority and its leaves.
    .package(url: "https://github.com/apple/swift-certificates", from: "1.21.1"),
    // FileDescriptor: reads and writes that retry on EINTR and finish short writes.
    .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
    // Tests only: child processes awaited without holding a thread.
    .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
  ] + docsPlugin,
  targets: [
    // libsecret's and GLib's API as odr calls it, loaded on first use
    // (dlopen): no headers or link flags needed to build.
    .systemLibrary(name: "CLibsecret"),
    // The real headers and library, for the benchmark's bare libsecret
    // client (CBareLookup) and the check of CLibsecret's declarations.
    .systemLibrary(
      name: "CLibsecretSystem",
      path: "Benchmarks/CLibsecretSystem",
      pkgConfig: "libsecret-1",
      providers: [.apt(["libsecret-1-dev"])]
    ),
    .target(name: "CBareLookup", dependencies: ["CLibsecretSystem"], path: "Benchmarks/CBareLookup"),
    .target(
      name: "ODRBase",
      swiftSettings: strictSettings
    ),
    .target(name: "CKeyctl"),
    .target(
      name: "ODRKeyring",
      dependencies: ["CKeyctl", "CLibsecret", "ODRBase"],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRSigning",
      dependencies: ["ODRBase", .product(name: "Crypto", package: "swift-crypto")],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRAge",
      dependencies: ["CGcryptRSA", "ODRBase", "ODRSigning", .product(name: "Crypto", package: "swift-crypto")],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRCatalog",
      dependencies: ["ODRBase", "ODRSigning", .product(name: "Crypto", package: "swift-crypto"), .product(name: "SystemPackage", package: "swift-system")],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRTrust",
      dependencies: ["ODRBase", "ODRCatalog", "ODRSigning"],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRTransports",
      dependencies: ["ODRBase", "ODRCatalog", "ODRURL", .product(name: "Crypto", package: "swift-crypto")],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRResources",
      dependencies: ["ODRBase", "ODRCatalog", "ODRTransports", "ODRSigning", "ODRTrust", .product(name: "Crypto", package: "swift-crypto")],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRPublishing",
      dependencies: ["ODRAge", "ODRBase", "ODRCatalog", "ODRKeyFormat", "ODRResources", "ODRTransports", "ODRSigning", "ODRTrust", .product(name: "Crypto", package: "swift-crypto")],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRHTTP",
      dependencies: [
        "ODRBase",
        "ODRCatalog",
        "ODRTransports",
      ] + networkStack + [
        .product(name: "NIOTLS", package: "swift-nio", condition: tools),
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: strictSettings
    ),
    // The keys' format: documents, metadata, variable names, masking. Pure:
    // it links no keyring, so the proxy, CI and publishing need none for it.
    .target(
      name: "ODRKeyFormat",
      dependencies: ["ODRBase", "ODRURL"],
      swiftSettings: strictSettings
    ),
    // The keys' behaviour: the provider, imports into a store, identities.
    .target(
      name: "ODRKeys",
      dependencies: ["ODRAge", "ODRBase", "ODRCatalog", "ODRKeyFormat", "ODRKeyring", "ODRResources", "ODRSigning", .product(name: "Crypto", package: "swift-crypto")],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRConfiguration",
      dependencies: ["ODRBase", "ODRCatalog", "ODRTransports", "ODRSigning", "ODRTrust", .product(name: "Crypto", package: "swift-crypto")],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRURL",
      dependencies: ["ODRBase"],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRNetworking",
      dependencies: ["ODRKeyFormat", "ODRBase", "ODRCatalog", "ODRTransports", "ODRURL", .product(name: "Logging", package: "swift-log")],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRKit",
      dependencies: ["ODRAge", "ODRBase", "ODRCatalog", "ODRConfiguration", "ODRKeyFormat", "ODRKeyring", "ODRKeys", "ODRNetworking", "ODRResources",
                     "ODRTransports", "ODRSigning", "ODRTrust", "ODRURL", .product(name: "Logging", package: "swift-log")],
      swiftSettings: strictSettings
    ),
    .target(name: "CHardening"),
    // What the fuzz targets (FuzzTesting/, scripts/checks/fuzz) and the suite's
    // replay of their kept crashers feed inputs to.
    .target(
      name: "ODRFuzzEntries",
      dependencies: ["ODRAge", "ODRBase", "ODRExec", "ODRCatalog", "ODRConfiguration", "ODRKeyFormat", "ODRProxy", "ODRPublishing", "ODRTransports", "ODRSigning"],
      swiftSettings: strictSettings
    ),
    // RSA-OAEP with a label (age's ssh-rsa stanza) from libgcrypt, which
    // libsecret already loads (libsecret-1-dev depends on libgcrypt20-dev).
    .target(name: "CGcryptRSA"),  // libgcrypt loaded on first use (dlopen)
    .target(
      name: "ODRExec",
      dependencies: ["CHardening", "ODRBase", "ODRKeyFormat", "ODRProxy", .product(name: "SystemPackage", package: "swift-system")],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRProxy",
      dependencies: ["ODRBase", "ODRKeyFormat", "ODRTransports", "ODRURL"],
      swiftSettings: strictSettings
    ),
    // The proxy of `odr exec --proxy` on the network: the listener, TLS
    // interception with the run's CA, tunnels, and the upstream client.
    .target(
      name: "ODRProxyServer",
      dependencies: [
        "ODRBase",
        "ODRHTTP",
        "ODRKeyFormat",
        "ODRProxy",
      ] + networkStack + [
        .product(name: "NIOTLS", package: "swift-nio", condition: tools),
        .product(name: "X509", package: "swift-certificates", condition: tools),
      ],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRCommandLine",
      dependencies: [
        "CHardening",
        "ODRAge",
        "ODRBase",
        "ODRExec",
        "ODRCatalog",
        "ODRConfiguration",
        "ODRHTTP",
        "ODRKeyFormat",
        "ODRKeyring",
        "ODRKeys",
        "ODRProxy",
        "ODRProxyServer",
        "ODRPublishing",
        "ODRResources",
        "ODRTransports",
        "ODRSigning",
        "ODRTrust",
        "ODRURL",
        .product(name: "ArgumentParser", package: "swift-argument-parser", condition: tools),
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: strictSettings
    ),
    .executableTarget(
      name: "odr",
      dependencies: ["ODRCommandLine"],
      swiftSettings: strictSettings,
      linkerSettings: staticRuntime(essentials)
    ),
    .target(
      name: "ODRHTTPCommand",
      dependencies: ["ODRBase", "ODRCommandLine", "ODRKeyFormat", "ODRNetworking", "ODRURL", .product(name: "Logging", package: "swift-log")],
      swiftSettings: strictSettings
    ),
    .executableTarget(
      name: "odr-http",
      dependencies: ["ODRCommandLine", "ODRHTTPCommand"],
      swiftSettings: strictSettings,
      linkerSettings: staticRuntime(networking)
    ),
    // Test support: servers, keyring sessions, child processes. It links no
    // odr module but ODRBase, so a low module's tests build without the CLI.
    .target(
      name: "ODRTesting",
      dependencies: [
        "ODRBase",
        .product(name: "Subprocess", package: "swift-subprocess", condition: tools),
        // the loopback HTTP server that scripts answers and injects faults (TestHTTPServer)
        .product(name: "NIOCore", package: "swift-nio", condition: tools),
        .product(name: "NIOHTTP1", package: "swift-nio", condition: tools),
        .product(name: "NIOPosix", package: "swift-nio", condition: tools),
      ],
      swiftSettings: strictSettings
    ),
    // The CLI run in the test process (Command.odr): for the suites that test odr's commands.
    .target(
      name: "ODRCLITesting",
      dependencies: ["ODRBase", "ODRCommandLine", "ODRHTTP", "ODRHTTPCommand", "ODRKeyring", "ODRTesting", "ODRTransports", .product(name: "SystemPackage", package: "swift-system"),
                     .product(name: "NIOCore", package: "swift-nio", condition: tools), .product(name: "NIOHTTP1", package: "swift-nio", condition: tools)],
      swiftSettings: strictSettings
    ),
    .executableTarget(
      name: "WeatherClient",
      dependencies: ["ODRKit"],
      path: "Examples/WeatherClient",
      swiftSettings: strictSettings
    ),
    .executableTarget(
      name: "odr-bench",
      dependencies: ["ODRKeyFormat", "CBareLookup", "ODRAge", "ODRCatalog", "ODRCLITesting", "ODRKeyring", "ODRKeys", "ODRNetworking", "ODRTesting", "ODRSigning", "ODRTrust"],
      path: "Benchmarks/odr-bench",
      exclude: ["keepalive.py", "sigv4.py", "sse.py"],
      swiftSettings: strictSettings
    ),
    .executableTarget(
      name: "odr-floor",
      dependencies: ["CLibsecretSystem"],
      path: "Benchmarks/odr-floor",
      swiftSettings: strictSettings,
      linkerSettings: staticRuntime([])
    ),
    .executableTarget(
      name: "odr-search-once",
      dependencies: ["ODRKeyring"],
      path: "Benchmarks/odr-search-once",
      swiftSettings: strictSettings,
      linkerSettings: staticRuntime(foundation)
    ),
    .testTarget(
      name: "ODRKeyringTests",
      dependencies: ["CBareLookup", "CLibsecret", "ODRKeyring", "ODRTesting"],
      swiftSettings: testSettings
    ),
    .testTarget(
      name: "ODRSigningTests",
      dependencies: ["ODRBase", "ODRAge", "ODRTesting", "ODRSigning", .product(name: "Crypto", package: "swift-crypto")],
      swiftSettings: testSettings
    ),
    // The trust decision's table, at its own level.
    .testTarget(
      name: "ODRTrustTests",
      dependencies: ["ODRCatalog", "ODRSigning", "ODRTesting", "ODRTrust"],
      swiftSettings: testSettings
    ),
    .testTarget(
      name: "ODRResourcesTests",
      dependencies: ["ODRAge", "ODRBase", "ODRCatalog", "ODRConfiguration", "ODRFuzzEntries", "ODRKeyFormat", "ODRPublishing", "ODRResources", "ODRTesting", "ODRTransports", "ODRSigning", "ODRTrust", .product(name: "SystemPackage", package: "swift-system")],
      swiftSettings: testSettings
    ),
    .testTarget(
      name: "ODRHTTPTests",
      dependencies: ["ODRBase", "ODRCatalog", "ODRHTTP", "ODRPublishing", "ODRResources", "ODRTesting", "ODRTrust",
                     .product(name: "NIOCore", package: "swift-nio"), .product(name: "NIOHTTP1", package: "swift-nio")],
      swiftSettings: testSettings
    ),
    .testTarget(
      name: "ODRKeysTests",
      dependencies: ["ODRKeyFormat", "ODRAge", "ODRBase", "ODRCatalog", "ODRKeyring", "ODRKeys", "ODRKit", "ODRPublishing", "ODRResources", "ODRTesting", "ODRTransports", "ODRSigning", "ODRTrust"],
      swiftSettings: testSettings
    ),
    .testTarget(
      name: "ODRProxyTests",
      dependencies: ["ODRCLITesting", "ODRKeyFormat", "ODRProxy", "ODRProxyServer", "ODRTesting", "ODRTransports", .product(name: "NIOHTTP1", package: "swift-nio", condition: tools),
                     .product(name: "X509", package: "swift-certificates", condition: tools)],
      swiftSettings: testSettings
    ),
    .testTarget(
      name: "ODRExecTests",
      dependencies: ["CHardening", "ODRExec", "ODRKeyFormat", "ODRKeyring", "ODRProxy", "ODRTesting"],
      swiftSettings: testSettings
    ),
    .testTarget(
      name: "ODRNetworkingTests",
      dependencies: ["ODRNetworking", "ODRURL", "ODRKeyFormat", "ODRTesting", .product(name: "Logging", package: "swift-log")],
      swiftSettings: testSettings
    ),
    .testTarget(
      name: "ODRCLITests",
      dependencies: ["ODRCLITesting", "WeatherClient", "ODRAge", "ODRBase", "ODRCatalog", "ODRCommandLine", "ODRTesting", "ODRSigning", "ODRURL",
                     .product(name: "ArgumentParser", package: "swift-argument-parser", condition: tools)],
      exclude: ["Golden"],
      swiftSettings: testSettings
    ),
  ],
  swiftLanguageModes: [.v6]
)

/// `swift package generate-documentation` (scripts/docs sets ODR_DOCS): the
/// DocC catalogs of the libraries. Only then, so nobody else resolves it.
var docsPlugin: [Package.Dependency] {
  Context.environment["ODR_DOCS"] == nil ? [] : [.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0")]
}

// The libFuzzer targets, one per parser (FuzzTesting/<name>/main.swift), only
// when scripts/checks/fuzz builds them (ODR_FUZZ=1, with -sanitize=fuzzer): an
// ordinary build has no libFuzzer to link them with.
if Context.environment["ODR_FUZZ"] == "1" {
  package.targets.append(.target(name: "FuzzDriver", path: "FuzzTesting/FuzzDriver", swiftSettings: strictSettings))
  for name in ["FuzzJSONReader", "FuzzCatalog", "FuzzSignatureLines", "FuzzHandover", "FuzzDocuments", "FuzzAgeFile",
               "FuzzSSHKeys", "FuzzRecipientsFile", "FuzzDotenv", "FuzzTemplate", "FuzzProxyRequest", "FuzzS3Listing", "FuzzAWSAnswer"] {
    package.targets.append(.executableTarget(name: name, dependencies: ["FuzzDriver", "ODRFuzzEntries"], path: "FuzzTesting/\(name)",
                                             swiftSettings: strictSettings))
  }
}

// swift-tools-version: 6.1
import PackageDescription

let strictSettings: [SwiftSetting] = [
  .enableUpcomingFeature("ExistentialAny"),
  .enableUpcomingFeature("InternalImportsByDefault"),
  .enableUpcomingFeature("MemberImportVisibility"),
]

let package = Package(
  name: "odr",
  // Linux only: libsecret, /proc and Glibc are part of the design.
  products: [
    .executable(name: "odr", targets: ["odr"]),
    .executable(name: "odr-http", targets: ["odr-http"]),
    .library(name: "ODRKeyring", targets: ["ODRKeyring"]),
    .library(name: "ODRTrust", targets: ["ODRTrust"]),
    .library(name: "ODRResources", targets: ["ODRResources"]),
    .library(name: "ODRKeys", targets: ["ODRKeys"]),
    .library(name: "ODRHTTP", targets: ["ODRHTTP"]),
    .library(name: "ODRCI", targets: ["ODRCI"]),
    .library(name: "ODRNetworking", targets: ["ODRNetworking"]),
    .library(name: "ODRURL", targets: ["ODRURL"]),
  ],
  dependencies: [
    .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
    .package(url: "https://github.com/apple/swift-crypto", from: "4.5.2"),
    .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
    .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    // FileDescriptor: reads and writes that retry on EINTR and finish short writes.
    .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
    // Tests only: child processes awaited without holding a thread.
    .package(url: "https://github.com/swiftlang/swift-subprocess", from: "1.0.2"),
    // Tests only: the loopback HTTP server that scripts answers and injects faults.
    // No traits: neither swift-configuration nor full Foundation is needed.
    .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.1", traits: []),
    .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
    // `swift package generate-documentation` (scripts/docs): the DocC catalogs of the libraries.
    .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
  ],
  targets: [
    .systemLibrary(
      name: "CLibsecret",
      pkgConfig: "libsecret-1",
      providers: [.apt(["libsecret-1-dev"])]
    ),
    .target(
      name: "ODRNames",
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRKeyring",
      dependencies: ["CLibsecret", "ODRNames"],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRTrust",
      dependencies: [.product(name: "Crypto", package: "swift-crypto")],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRResources",
      dependencies: ["ODRTrust", "ODRNames", .product(name: "Crypto", package: "swift-crypto"), .product(name: "SystemPackage", package: "swift-system")],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRHTTP",
      dependencies: [
        "ODRResources",
        "ODRURL",
        .product(name: "AsyncHTTPClient", package: "async-http-client"),
        .product(name: "Crypto", package: "swift-crypto"),
        .product(name: "NIOCore", package: "swift-nio"),
        .product(name: "NIOHTTP1", package: "swift-nio"),
      ],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRKeys",
      dependencies: ["ODRKeyring", "ODRResources", "ODRTrust", "ODRURL"],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRURL",
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRNetworking",
      dependencies: ["ODRKeys", "ODRURL", .product(name: "Logging", package: "swift-log")],
      swiftSettings: strictSettings
    ),
    .target(name: "CHardening"),
    .target(
      name: "ODRCI",
      dependencies: ["ODRKeys", "CHardening", .product(name: "SystemPackage", package: "swift-system")],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRCommandLine",
      dependencies: [
        "ODRCI",
        "ODRURL",
        "ODRTrust",
        "ODRKeyring",
        "ODRKeys",
        "ODRResources",
        "ODRHTTP",
        .product(name: "ArgumentParser", package: "swift-argument-parser"),
        .product(name: "SystemPackage", package: "swift-system"),
      ],
      swiftSettings: strictSettings
    ),
    .executableTarget(
      name: "odr",
      dependencies: ["ODRCommandLine"],
      swiftSettings: strictSettings
    ),
    .executableTarget(
      name: "odr-http",
      dependencies: ["ODRCommandLine", "ODRNetworking", "ODRKeys", "ODRURL", .product(name: "Logging", package: "swift-log")],
      swiftSettings: strictSettings
    ),
    .target(
      name: "ODRTesting",
      dependencies: [
        .product(name: "Subprocess", package: "swift-subprocess"),
        .product(name: "Hummingbird", package: "hummingbird"),
        .product(name: "HTTPTypes", package: "swift-http-types"),
        .product(name: "Logging", package: "swift-log"),
        .product(name: "NIOCore", package: "swift-nio"),
      ],
      swiftSettings: strictSettings
    ),
    .executableTarget(
      name: "WeatherClient",
      dependencies: ["ODRKeys", "ODRKeyring"],
      path: "Examples/WeatherClient",
      swiftSettings: strictSettings
    ),
    .executableTarget(
      name: "odr-bench",
      dependencies: ["ODRKeyring", "ODRKeys", "ODRNetworking", "ODRResources", "ODRTrust", "CLibsecret", "ODRTesting"],
      path: "Benchmarks/odr-bench",
      swiftSettings: strictSettings
    ),
    .executableTarget(
      name: "odr-search-once",
      dependencies: ["ODRKeyring"],
      path: "Benchmarks/odr-search-once",
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "ODRKeyringTests",
      dependencies: ["ODRKeyring", "ODRTesting"],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "ODRTrustTests",
      dependencies: ["ODRTrust", "ODRTesting"],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "ODRResourcesTests",
      dependencies: ["ODRResources", "ODRTrust", "ODRTesting", .product(name: "SystemPackage", package: "swift-system")],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "ODRHTTPTests",
      dependencies: ["ODRHTTP", "ODRResources", "ODRTesting"],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "ODRKeysTests",
      dependencies: ["ODRKeys", "ODRKeyring", "ODRResources", "ODRTesting"],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "ODRCITests",
      dependencies: ["ODRCI", "ODRKeys", "ODRKeyring", "ODRTesting"],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "ODRNetworkingTests",
      dependencies: ["ODRNetworking", "ODRURL", "ODRKeys", "ODRTesting", .product(name: "Logging", package: "swift-log")],
      swiftSettings: strictSettings
    ),
    .testTarget(
      name: "ODRCLITests",
      dependencies: ["odr", "odr-http", "WeatherClient", "ODRTesting", "ODRTrust", "ODRResources", "ODRCommandLine",
                     .product(name: "ArgumentParser", package: "swift-argument-parser")],
      swiftSettings: strictSettings
    ),
  ],
  swiftLanguageModes: [.v6]
)

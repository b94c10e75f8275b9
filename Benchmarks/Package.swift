// swift-tools-version: 6.1
import PackageDescription

// The benchmark CLI lives in its own package so the library stays free of
// package dependencies (as swift-nio does with its benchmarks).
let package = Package(
    name: "KVCacheBenchmarks",
    // KVCache itself needs macOS 15 (the standard library's atomics).
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "kvcache-bench", targets: ["kvcache-bench"]),
        .executable(name: "kvcache", targets: ["kvcache"]),
        .executable(name: "kvcache-proxy", targets: ["kvcache-proxy"]),
    ],
    dependencies: [
        // The Hummingbird trait: KVCacheHummingbird for `kvcache-bench persist`; HTTP: KVCacheHTTP
        // for `kvcache-proxy`.
        .package(name: "KVCache", path: "..", traits: ["Hummingbird", "HTTP", "AsyncHTTPClient"]),
        // kvcache-proxy's client to the upstream, and its server's logger.
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.0.0"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
        // Insecure.MD5 names the file-per-key strategy's files, as SDWebImage and Kingfisher do.
        .package(url: "https://github.com/apple/swift-crypto", from: "3.12.3"),
        // Latency percentiles (p50/p99/p999) of single operations.
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        // The console tables.
        .package(url: "https://github.com/ordo-one/TextTable", from: "0.0.2"),
    ],
    targets: [
        // The root package's CSQLite is a target, not a product, so it cannot be
        // depended on from here; the raw-SQLite strategies get their own module.
        .systemLibrary(
            name: "BenchSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // statfs(2) and mallinfo2(3), which the Glibc module does not export.
        .systemLibrary(name: "BenchSystem"),
        // hiredis itself, for the raw floor of `kvcache-bench remote` (the root package's
        // CHiredis is not a product). No pkgConfig: hiredis's .pc adds -D_FILE_OFFSET_BITS=64,
        // which SwiftPM refuses with a warning; the headers are on the default include path.
        .systemLibrary(name: "BenchHiredis"),
        .executableTarget(
            name: "kvcache-bench",
            dependencies: [
                "BenchSQLite",
                "BenchSystem",
                "BenchHiredis",
                .product(name: "KVCache", package: "KVCache"),
                .product(name: "KVCacheRedis", package: "KVCache"),
                .product(name: "KVCacheHummingbird", package: "KVCache"),
                .product(name: "KVCacheHTTP", package: "KVCache"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HummingbirdTesting", package: "hummingbird"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                .product(name: "TextTable", package: "TextTable"),
            ]
        ),
        // The maintenance CLI: inspect, read, write, trim and verify a cache directory.
        .executableTarget(
            name: "kvcache",
            dependencies: [
                .product(name: "KVCache", package: "KVCache"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // A caching reverse proxy: KVCacheHTTP between Hummingbird and AsyncHTTPClient.
        .executableTarget(
            name: "kvcache-proxy",
            dependencies: [
                .product(name: "KVCache", package: "KVCache"),
                .product(name: "KVCacheHTTP", package: "KVCache"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                // The server core only: Hummingbird's Application sets every response's Date.
                .product(name: "HummingbirdCore", package: "hummingbird"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
        // The benchmark CLI's own logic (targets, report, file names), imported @testable.
        .testTarget(
            name: "KVCacheBenchTests",
            dependencies: ["kvcache-bench"]
        ),
        // Runs the built `kvcache` binary as a child process on temporary directories.
        .testTarget(
            name: "KVCacheToolTests",
            dependencies: ["kvcache"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

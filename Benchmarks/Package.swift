// swift-tools-version: 6.1
import PackageDescription

// The benchmark CLI lives in its own package so the library stays free of
// package dependencies (as swift-nio does with its benchmarks).
let package = Package(
    name: "KVCacheBenchmarks",
    platforms: [.macOS(.v13)],
    products: [
        .executable(name: "kvcache-bench", targets: ["kvcache-bench"]),
    ],
    dependencies: [
        .package(name: "KVCache", path: ".."),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.5.0"),
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
        .executableTarget(
            name: "kvcache-bench",
            dependencies: [
                "BenchSQLite",
                "BenchSystem",
                .product(name: "KVCache", package: "KVCache"),
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

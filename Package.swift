// swift-tools-version: 6.1
import PackageDescription

// The library depends on nothing but the system SQLite. Tools with package
// dependencies (the benchmark CLI, the maintenance CLI) live in Benchmarks/.
let package = Package(
    name: "KVCache",
    products: [
        .library(name: "KVCache", targets: ["KVCache"]),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(
            name: "KVCache",
            dependencies: ["CSQLite"]
        ),
        // The child process of the crash and multi-process tests: not a product,
        // built by `swift test` and found beside the test bundle.
        .executableTarget(
            name: "KVCacheTestWorker",
            dependencies: ["KVCache"]
        ),
        .testTarget(
            name: "KVCacheTests",
            dependencies: ["KVCache"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

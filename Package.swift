// swift-tools-version: 6.1
import PackageDescription

// The library depends on nothing but the system SQLite. Tools with package
// dependencies (the benchmark CLI, the maintenance CLI) live in Benchmarks/.
let package = Package(
    name: "KVCache",
    // Linux is the target; on Apple platforms the standard library's atomics need these.
    platforms: [.macOS(.v15), .iOS(.v18), .tvOS(.v18), .watchOS(.v11), .visionOS(.v2)],
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
            dependencies: ["KVCache", "KVCacheTestSupport"]
        ),
        // Self-checking values shared by the test worker and the tests (not a product).
        .target(name: "KVCacheTestSupport"),
        .testTarget(
            name: "KVCacheTests",
            dependencies: ["KVCache", "KVCacheTestSupport"]
        ),
    ],
    swiftLanguageModes: [.v6]
)

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
    // Optional integrations, off by default: a package that depends on KVCache without
    // enabling one fetches and builds nothing for it (trait-guarded dependencies are not
    // resolved; Swift 6.2 and later).
    traits: [
        .trait(name: "Logging", description: "Report failures no caller sees (background trims, sweeps, rebuilt manifests) to a swift-log Logger."),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        .target(
            name: "KVCache",
            dependencies: [
                "CSQLite",
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Logging"])),
            ]
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
            dependencies: [
                "KVCache", "KVCacheTestSupport",
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Logging"])),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// swift-tools-version: 6.1
import PackageDescription

// Allocation counts of KVCache's hot paths, checked by package-benchmark
// (`swift package benchmark thresholds check`). A package of its own so the
// library's and the CLI's builds never compile the benchmark framework.
// The MallocInterposer trait counts mallocs without jemalloc, which this
// toolchain needs on Linux.
let package = Package(
    name: "KVCacheAllocations",
    platforms: [.macOS(.v13)],
    dependencies: [
        .package(name: "KVCache", path: "../.."),
        .package(url: "https://github.com/ordo-one/benchmark", exact: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "HotPaths",
            dependencies: [
                .product(name: "KVCache", package: "KVCache"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "Benchmarks/HotPaths",
            plugins: [
                .plugin(name: "BenchmarkPlugin", package: "benchmark"),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

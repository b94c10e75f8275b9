// swift-tools-version:6.0
// Only MemoryCache get hits (or the Dictionary+mutex floor), so that `perf` sees the
// cache and nothing else: see main.swift for how to run it.
import PackageDescription

let package = Package(
    name: "get-hit-profile",
    dependencies: [.package(name: "KVCache", path: "../../..")],
    targets: [
        .executableTarget(name: "get-hit-profile", dependencies: [.product(name: "KVCache", package: "KVCache")]),
    ]
)

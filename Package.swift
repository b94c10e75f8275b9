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
        // The Redis level: needs the system hiredis (`apt-get install libhiredis-dev`).
        // A package that uses only KVCache neither builds nor links it.
        .library(name: "KVCacheRedis", targets: ["KVCacheRedis"]),
        // A Vapor `Cache` driver (`app.caches.use(.kvcache(...))`): empty without the trait `Vapor`.
        .library(name: "KVCacheVapor", targets: ["KVCacheVapor"]),
        // A Hummingbird 2 PersistDriver (the Hummingbird trait).
        .library(name: "KVCacheHummingbird", targets: ["KVCacheHummingbird"]),
        // An RFC 9111 HTTP cache over a Cache<Data> (the HTTP trait).
        .library(name: "KVCacheHTTP", targets: ["KVCacheHTTP"]),
    ],
    // Optional integrations, off by default: a package that depends on KVCache without
    // enabling one fetches and builds nothing for it (trait-guarded dependencies are not
    // resolved; Swift 6.2 and later).
    traits: [
        .trait(name: "Logging", description: "Report failures no caller sees (background trims, sweeps, rebuilt manifests) to a swift-log Logger."),
        .trait(name: "ServiceLifecycle", description: "Cache and MemoryPressureMonitor as swift-service-lifecycle Services that flush and close, or stop, on graceful shutdown."),
        .trait(name: "Metrics", description: "Export each memory and disk cache's hits, misses, sets, evictions, totals and commit times to swift-metrics."),
        .trait(name: "Tracing", description: "A swift-distributed-tracing span for each Cache load and each call to the remote level."),
        .trait(name: "Vapor", description: "The KVCacheVapor product: a Vapor 4 Cache driver over a two-level KVCache, bounded and kept across restarts."),
        .trait(name: "Hummingbird", description: "KVCachePersistDriver: a Hummingbird 2 PersistDriver backed by a Cache<Data> (product KVCacheHummingbird)."),
        .trait(name: "HTTP", description: "The KVCacheHTTP product: an RFC 9111 HTTP cache (private or shared) over a Cache<Data>, in swift-http-types' vocabulary."),
        .trait(name: "OpenAPI", description: "HTTPCacheMiddleware in KVCacheHTTP: the HTTP cache as a swift-openapi-runtime ClientMiddleware (turns on HTTP).",
               enabledTraits: ["HTTP"]),
        .trait(name: "AsyncHTTPClient", description: "CachingHTTPClient in KVCacheHTTP: an AsyncHTTPClient whose requests the HTTP cache answers, revalidates and stores (turns on HTTP).",
               enabledTraits: ["HTTP"]),
        .default(enabledTraits: []),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing", from: "1.7.0"),
        .package(url: "https://github.com/vapor/vapor", from: "4.122.0"),
        .package(url: "https://github.com/hummingbird-project/hummingbird", from: "2.28.0"),
        .package(url: "https://github.com/apple/swift-http-types", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-openapi-runtime", from: "1.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
    ],
    targets: [
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // hiredis's headers are under the default include path (<hiredis/hiredis.h>); its
        // pkg-config file adds -D_FILE_OFFSET_BITS=64, which SwiftPM refuses with a warning.
        .systemLibrary(name: "CHiredis"),
        // A header only (no library): a prefetch hint and a thread-local number, which Swift lacks.
        .systemLibrary(name: "CProcessor"),
        .target(name: "KVCacheRedis", dependencies: ["KVCache", "CHiredis"]),
        // Empty unless the Hummingbird trait is on (its code is under #if Hummingbird).
        .target(
            name: "KVCacheHummingbird",
            dependencies: [
                "KVCache",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
            ]
        ),
        // The child process of the Hummingbird two-process and restart tests: an app with
        // the driver serving on a port (not a product; found beside the test bundle).
        .executableTarget(
            name: "KVCacheHummingbirdTestApp",
            dependencies: [
                "KVCache", "KVCacheHummingbird", "KVCacheTestSupport",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
            ]
        ),
        .target(
            name: "KVCache",
            dependencies: [
                "CSQLite", "CProcessor",
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Logging"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle",
                         condition: .when(traits: ["ServiceLifecycle"])),
                .product(name: "Metrics", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
                .product(name: "Tracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
            ]
        ),
        // The child process of the crash and multi-process tests: not a product,
        // built by `swift test` and found beside the test bundle.
        .executableTarget(
            name: "KVCacheTestWorker",
            dependencies: ["KVCache", "KVCacheTestSupport"]
        ),
        // The child process of the two-process Redis tests: a cache in front of a Redis,
        // driven over pipes (not a product; found beside the test bundle). Separate from
        // KVCacheTestWorker so that one needs nothing but SQLite.
        .executableTarget(
            name: "KVCacheRedisTestWorker",
            dependencies: ["KVCache", "KVCacheRedis", "KVCacheTestSupport"]
        ),
        // Self-checking values and the spawning of test workers, shared by the workers and
        // the tests (not a product).
        .target(name: "KVCacheTestSupport"),
        .testTarget(
            name: "KVCacheTests",
            dependencies: [
                "KVCache", "KVCacheTestSupport",
                .product(name: "Logging", package: "swift-log", condition: .when(traits: ["Logging", "ServiceLifecycle"])),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle",
                         condition: .when(traits: ["ServiceLifecycle"])),
                .product(name: "MetricsTestKit", package: "swift-metrics", condition: .when(traits: ["Metrics"])),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
            ]
        ),
        .target(
            name: "KVCacheVapor",
            dependencies: ["KVCache", .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"]))]
        ),
        // The child process of the Vapor driver's two-process tests: an app that serves a
        // KVCache-backed `app.cache` on a port (not a product; found beside the test bundle).
        .executableTarget(
            name: "KVCacheVaporTestApp",
            dependencies: ["KVCacheVapor", .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"]))]
        ),
        .testTarget(
            name: "KVCacheVaporTests",
            dependencies: [
                "KVCache", "KVCacheVapor", "KVCacheRedis", "KVCacheTestSupport",
                .product(name: "Vapor", package: "vapor", condition: .when(traits: ["Vapor"])),
                .product(name: "VaporTesting", package: "vapor", condition: .when(traits: ["Vapor"])),
            ]
        ),
        // Against real Redis servers (KVCACHE_REDIS_URL, KVCACHE_REDIS_CLUSTER); they skip
        // with a printed reason where those are not set.
        .testTarget(
            name: "KVCacheRedisTests",
            dependencies: [
                "KVCache", "KVCacheRedis", "KVCacheTestSupport",
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing", condition: .when(traits: ["Tracing"])),
            ]
        ),
        // Empty unless the HTTP trait is on (its code is under #if HTTP).
        .target(
            name: "KVCacheHTTP",
            dependencies: [
                "KVCache",
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["HTTP"])),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: .when(traits: ["OpenAPI"])),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["AsyncHTTPClient"])),
            ]
        ),
        .testTarget(
            name: "KVCacheHTTPTests",
            dependencies: [
                "KVCache", "KVCacheHTTP",
                .product(name: "HTTPTypes", package: "swift-http-types", condition: .when(traits: ["HTTP"])),
                .product(name: "OpenAPIRuntime", package: "swift-openapi-runtime", condition: .when(traits: ["OpenAPI"])),
                .product(name: "AsyncHTTPClient", package: "async-http-client", condition: .when(traits: ["AsyncHTTPClient"])),
                // A real origin server for the client's tests.
                .product(name: "NIOPosix", package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient"])),
                .product(name: "NIOHTTP1", package: "swift-nio", condition: .when(traits: ["AsyncHTTPClient"])),
            ]
        ),
        .testTarget(
            name: "KVCacheHummingbirdTests",
            dependencies: [
                "KVCache", "KVCacheHummingbird", "KVCacheTestSupport",
                .product(name: "Hummingbird", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
                .product(name: "HummingbirdTesting", package: "hummingbird", condition: .when(traits: ["Hummingbird"])),
            ]
        ),
    ],
    swiftLanguageModes: [.v6]
)

// The documentation plugin (swift-docc-plugin), only when building the docs:
//     KVCACHE_DOCS=1 swift package --scratch-path .build-docs generate-documentation --target KVCache
// Without KVCACHE_DOCS the package has no such dependency, so a package that depends on
// KVCache (and a plain build of this one) never fetches it.
if Context.environment["KVCACHE_DOCS"] != nil {
    package.dependencies.append(.package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"))
}

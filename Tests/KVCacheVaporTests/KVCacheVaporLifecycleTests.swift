#if Vapor
import Foundation
import KVCache
@testable import KVCacheVapor
import Testing
import Vapor

/// The driver's place in an application: one cache per `use`, closed at shutdown, a failed
/// open refusing the boot, event loops never held up by disk work.
@Suite struct KVCacheVaporLifecycleTests {
    @Test func oneCacheServesEveryDriverValueOfTheApplication() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        try await withKVCacheApp(directory: dir.url) { app in
            let cache = try #require(app.caches.kvcache)
            try await app.cache.set("k", to: "v")
            // Each `app.cache` is a new driver value over the same KVCache.
            #expect(try await app.cache.get("k", as: String.self) == "v")
            #expect(app.caches.kvcache === cache)
            #expect(cache.memory.value(forKey: "k") == Data("\"v\"".utf8))
        }
    }

    /// Shutdown flushes and closes: the directory is free for a new cache in this process,
    /// which finds the values.
    @Test func shutdownClosesTheCacheAndANewAppFindsTheValues() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        let closed = try await withKVCacheApp(directory: dir.url, diskWrite: .background) { app in
            try await app.cache.set("kept", to: ["a": 1])
            try await app.cache.set("short", to: "x", expiresIn: .hours(1))
            return try #require(app.caches.kvcache)
        }
        #expect(throws: KVCacheError.self) { try closed.disk.value(forKey: "kept") }
        try await withKVCacheApp(directory: dir.url) { app async throws in
            #expect(try await app.cache.get("kept", as: [String: Int].self) == ["a": 1])
            #expect(try await app.cache.get("short", as: String.self) == "x")
        }
    }

    /// The handler's synchronous `shutdown` (what Vapor's `app.shutdown()` calls; run on a
    /// thread of its own, as it blocks) flushes and closes the cache too, and a later
    /// `asyncShutdown` does not do it twice.
    @Test func theSynchronousShutdownClosesTheCacheOnce() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        let app = try await Application.make(.testing)
        app.caches.use(.kvcache(directory: dir.url, diskWrite: .background))
        try await app.cache.set("k", to: "v")
        let cache = try #require(app.caches.kvcache)
        let handler = DriverLifecycle(state: DriverState.of(app))
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread {
                handler.shutdown(app)
                done.resume()
            }.start()
        }
        #expect(throws: KVCacheError.self) { try cache.disk.value(forKey: "k") }
        try await app.asyncShutdown()
        let reopened = try KVCache.Cache<Data>(directory: dir.url)
        #expect(try await reopened.value(forKey: "k") == Data("\"v\"".utf8))
        try reopened.close()
    }

    /// An open that fails makes the boot throw its error, and every operation fail with it.
    @Test func aCacheThatCannotOpenFailsTheBootAndEveryOperation() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        try FileManager.default.createDirectory(at: dir.url, withIntermediateDirectories: true)
        let file = dir.url.appendingPathComponent("a-file")
        try Data("not a directory".utf8).write(to: file)
        let app = try await Application.make(.testing)
        app.logger.logLevel = .critical
        app.caches.use(.kvcache(directory: file))
        await #expect(throws: KVCacheError.self) { try await app.asyncBoot() }
        await #expect(throws: KVCacheError.self) { try await app.cache.get("k", as: String.self) }
        await #expect(throws: KVCacheError.self) { try await app.cache.set("k", to: "v") }
        #expect(app.caches.kvcache == nil)
        try await app.asyncShutdown()
    }

    /// Two applications of one process on one directory: the second's boot says the
    /// directory is in use (one cache per directory per process).
    @Test func aSecondAppOnTheSameDirectoryInOneProcessIsRefused() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        try await withKVCacheApp(directory: dir.url) { _ in
            let second = try await Application.make(.testing)
            second.logger.logLevel = .critical
            second.caches.use(.kvcache(directory: dir.url))
            let error = await #expect(throws: KVCacheError.self) { try await second.asyncBoot() }
            #expect(error?.code == .directoryInUse)
            try await second.asyncShutdown()
        }
    }

    /// A second `use(.kvcache(...))` on the same directory closes the first cache, then opens.
    @Test func usingTheDriverAgainReplacesTheCache() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        try await withKVCacheApp(directory: dir.url) { app in
            try await app.cache.set("k", to: 1)
            let first = try #require(app.caches.kvcache)
            app.caches.use(.kvcache(directory: dir.url))
            let second = try #require(app.caches.kvcache)
            #expect(first !== second)
            #expect(try await app.cache.get("k", as: Int.self) == 1)
            try await app.asyncBoot()
        }
    }

    /// A cache lent to the application: flushed at shutdown, closed only when asked.
    @Test func aLentCacheIsFlushedAndClosedOnlyWhenAsked() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        let cache = try KVCache.Cache<Data>(directory: dir.url)
        let app = try await Application.make(.testing)
        app.caches.use(.kvcache(cache, diskWrite: .background, closesOnShutdown: false))
        try await app.cache.set("k", to: "v")
        try await app.asyncShutdown()
        // Still open, and the background write landed before shutdown returned.
        #expect(try await cache.disk.value(forKey: "k") == Data("\"v\"".utf8))
        let owner = try await Application.make(.testing)
        owner.caches.use(.kvcache(cache))
        try await owner.asyncShutdown()
        #expect(throws: KVCacheError.self) { try cache.disk.value(forKey: "k") }
    }

    /// `req.cache` answers on the request's event loop; `app.cache` on one of the app's.
    @Test func futuresCompleteOnTheDriversEventLoop() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        try await withKVCacheApp(directory: dir.url) { app in
            app.get("loop") { request -> EventLoopFuture<String> in
                let future = request.cache.set("k", to: "v").flatMap { request.cache.get("k", as: String.self) }
                guard future.eventLoop === request.eventLoop else {
                    return request.eventLoop.makeSucceededFuture("other loop")
                }
                return future.map { value in
                    request.eventLoop.inEventLoop && value == "v" ? "same loop" : "wrong"
                }
            }
            try await app.testing().test(.GET, "loop") { response in
                #expect(response.body.string == "same loop")
            }
            let loop = app.eventLoopGroup.any()
            let request = Request(application: app, on: loop)
            let future: EventLoopFuture<String?> = app.cache.for(request).get("k", as: String.self)
            #expect(future.eventLoop === loop)
            #expect(try await future.get() == "v")
        }
    }

    /// Disk work never runs on the event loop: called on its loop, a get that must read the
    /// disk (or a set) has not completed when the call returns, while a small memory hit has.
    @Test func diskWorkNeverRunsOnTheEventLoop() async throws {
        let dir = VaporTemporaryDirectory()
        defer { dir.remove() }
        try await withKVCacheApp(directory: dir.url) { app in
            try await app.cache.set("k", to: "v")
            let loop = app.eventLoopGroup.any()
            // On the loop, a callback added to a future runs at once only if it has completed.
            @Sendable func completesInline<T>(_ future: EventLoopFuture<T>) -> Bool {
                var completed = false
                future.assumeIsolated().whenComplete { _ in completed = true }
                return completed
            }
            let memoryHitCompletedInline = try await loop.submit {
                completesInline(app.cache.for(Request(application: app, on: loop)).get("k", as: String.self))
            }.get()
            #expect(memoryHitCompletedInline)
            app.caches.kvcache?.memory.removeAll()
            let (diskReadCompletedInline, read) = try await loop.submit {
                let future = app.cache.for(Request(application: app, on: loop)).get("k", as: String.self)
                return (completesInline(future), future)
            }.get()
            #expect(!diskReadCompletedInline)
            #expect(try await read.get() == "v")
            let (setCompletedInline, write) = try await loop.submit {
                let future = app.cache.for(Request(application: app, on: loop)).set("k2", to: "v2")
                return (completesInline(future), future)
            }.get()
            #expect(!setCompletedInline)
            try await write.get()
        }
    }
}
#endif

#if Vapor
import Foundation
import KVCache
import KVCacheVapor
import Vapor

/// Runs `body` with a testing application whose `app.cache` is the KVCache driver on
/// `directory`, and shuts the application down after it, even when it throws.
func withKVCacheApp<T>(
    directory: URL,
    configuration: KVCache.Cache<Data>.Configuration = .init(),
    diskWrite: KVCache.Cache<Data>.DiskWrite = .immediate,
    _ body: (Application) async throws -> T
) async throws -> T {
    let app = try await Application.make(.testing)
    app.logger.logLevel = .warning
    app.caches.use(.kvcache(directory: directory, configuration: configuration, diskWrite: diskWrite))
    let result: T
    do {
        result = try await body(app)
    } catch {
        try? await app.asyncShutdown()
        throw error
    }
    try await app.asyncShutdown()
    return result
}

/// Polls `condition` until it holds or `bound` has passed; returns whether it held. The
/// bound is generous: beside every other suite on 2 cores, a task has waited 50 s for a thread.
func eventually(within bound: Duration = .seconds(120), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + bound
    while clock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(20))
    }
    return try await condition()
}

/// The routes of the tests' apps and of `KVCacheVaporTestApp`: the String at a key.
func addCacheRoutes(to app: Application) {
    app.get("cache", ":key") { request async throws -> Response in
        guard let value = try await request.cache.get(request.parameters.get("key")!, as: String.self) else {
            return Response(status: .notFound)
        }
        return Response(status: .ok, body: .init(string: value))
    }
    app.put("cache", ":key") { request async throws -> HTTPStatus in
        let ttl = request.query[Int.self, at: "ttl"]
        try await request.cache.set(request.parameters.get("key")!, to: request.body.string ?? "",
                                    expiresIn: ttl.map { .seconds($0) })
        return .noContent
    }
    app.delete("cache", ":key") { request async throws -> HTTPStatus in
        try await request.cache.delete(request.parameters.get("key")!)
        return .noContent
    }
}
#endif

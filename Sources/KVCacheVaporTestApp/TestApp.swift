// The child process of the Vapor driver's two-process tests: serves an app whose `app.cache`
// is the KVCache driver on the directory given as the first argument, on a free loopback port
// that it prints as "PORT <n>", until its standard input closes; then it shuts the app down
// (flushing and closing the cache), prints "STOPPED" and exits 0.
//
//     GET    /cache/:key          the String stored for key, or 404
//     PUT    /cache/:key?ttl=<s>  stores the request body as a String (ttl in seconds)
//     DELETE /cache/:key          removes it
import Foundation
#if Vapor
import KVCacheVapor
import Vapor
#endif

@main
enum TestApp {
    static func main() async throws {
        #if Vapor
        guard CommandLine.arguments.count == 2 else {
            FileHandle.standardError.write(Data("usage: KVCacheVaporTestApp <cache directory>\n".utf8))
            exit(2)
        }
        let app = try await Application.make(.testing)
        app.logger.logLevel = .warning
        app.caches.use(.kvcache(directory: URL(fileURLWithPath: CommandLine.arguments[1], isDirectory: true)))
        routes(app)
        try await app.asyncBoot()
        try await app.server.start(address: .hostname("127.0.0.1", port: 0))
        guard let port = app.http.server.shared.localAddress?.port else {
            FileHandle.standardError.write(Data("the server has no port\n".utf8))
            exit(1)
        }
        FileHandle.standardOutput.write(Data("PORT \(port)\n".utf8))
        // Blocking reads on a thread of their own: the server's event loops keep serving.
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread {
                while readLine() != nil {}
                done.resume()
            }.start()
        }
        await app.server.shutdown()
        try await app.asyncShutdown()
        FileHandle.standardOutput.write(Data("STOPPED\n".utf8))
        #else
        FileHandle.standardError.write(Data("KVCacheVaporTestApp needs the package trait Vapor\n".utf8))
        exit(1)
        #endif
    }

    #if Vapor
    static func routes(_ app: Application) {
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
}

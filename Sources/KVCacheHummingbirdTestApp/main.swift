// The child process of the Hummingbird two-process and restart tests: serves the persist
// routes of the tests with a KVCachePersistDriver on the cache directory given as the
// only argument, on a free loopback port, which it prints as "port N" once it listens.
// SIGTERM shuts it down gracefully (the driver flushes and closes the cache); it then
// prints "stopped" and exits 0.
#if Hummingbird
import Foundation
import Hummingbird
import KVCache
import KVCacheHummingbird
import KVCacheTestSupport

let arguments = CommandLine.arguments
guard arguments.count == 2 else {
    FileHandle.standardError.write(Data("usage: KVCacheHummingbirdTestApp <cache directory>\n".utf8))
    exit(2)
}
let persist = try KVCachePersistDriver(directory: URL(fileURLWithPath: arguments[1], isDirectory: true))
let router = Router()

router.put("/persist/:tag") { request, context -> HTTPResponse.Status in
    let body = try await request.body.collect(upTo: 1 << 20)
    try await persist.set(key: try context.parameters.require("tag"), value: String(buffer: body))
    return .ok
}
router.put("/persist/:tag/:time") { request, context -> HTTPResponse.Status in
    guard let time = context.parameters.get("time", as: Int.self) else { throw HTTPError(.badRequest) }
    let body = try await request.body.collect(upTo: 1 << 20)
    try await persist.set(key: try context.parameters.require("tag"), value: String(buffer: body), expires: .seconds(time))
    return .ok
}
router.put("/create/:tag") { request, context -> HTTPResponse.Status in
    let body = try await request.body.collect(upTo: 1 << 20)
    do {
        try await persist.create(key: try context.parameters.require("tag"), value: String(buffer: body))
    } catch let error as PersistError where error == .duplicate {
        throw HTTPError(.conflict)
    }
    return .ok
}
router.get("/persist/:tag") { _, context -> String? in
    try await persist.get(key: try context.parameters.require("tag"), as: String.self)
}
router.get("/persist/:tag/ttl") { _, context -> String? in
    try await persist.getWithTTL(key: try context.parameters.require("tag"), as: String.self)?
        .ttl.map { String($0.components.seconds) }
}
router.delete("/persist/:tag") { _, context -> HTTPResponse.Status in
    try await persist.remove(key: try context.parameters.require("tag"))
    return .noContent
}
// Makes this process's writes visible to the other processes now (see Multi-Process Use).
router.post("/flush") { _, _ -> HTTPResponse.Status in
    try await persist.cache.flush(durability: .committed)
    return .ok
}

let app = Application(
    router: router,
    configuration: .init(address: .hostname("127.0.0.1", port: 0)),
    services: [persist],
    onServerRunning: { channel in
        WorkerOutput.line("port \(channel.localAddress?.port ?? 0)")
    }
)
try await app.runService()
WorkerOutput.line("stopped")
#endif

#if Hummingbird
import Foundation
import Hummingbird
import HummingbirdTesting

/// The routes of Hummingbird's own PersistTests (2.28.1), over any driver, plus `/create`.
enum PersistRoutes {
    static func router(_ persist: some PersistDriver) -> Router<BasicRequestContext> {
        let router = Router()
        router.put("/persist/:tag") { request, context -> HTTPResponse.Status in
            let buffer = try await request.body.collect(upTo: .max)
            try await persist.set(key: try context.parameters.require("tag"), value: String(buffer: buffer))
            return .ok
        }
        router.put("/persist/:tag/:time") { request, context -> HTTPResponse.Status in
            guard let time = context.parameters.get("time", as: Int.self) else { throw HTTPError(.badRequest) }
            let buffer = try await request.body.collect(upTo: .max)
            try await persist.set(key: try context.parameters.require("tag"), value: String(buffer: buffer),
                                  expires: .seconds(time))
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
        router.put("/create/:tag") { request, context -> HTTPResponse.Status in
            let buffer = try await request.body.collect(upTo: .max)
            do {
                try await persist.create(key: try context.parameters.require("tag"), value: String(buffer: buffer))
            } catch let error as PersistError where error == .duplicate {
                throw HTTPError(.conflict)
            }
            return .ok
        }
        return router
    }
}

/// The two ways HummingbirdTesting runs an app: the router called directly, or a server on
/// a loopback port with a real HTTP client.
enum Transport: String, CaseIterable, Sendable, CustomStringConvertible {
    case router, live

    var setup: TestingSetup { self == .router ? .router : .live }
    var description: String { rawValue }
}

extension ByteBuffer {
    init(text: String) { self = ByteBufferAllocator().buffer(string: text) }
}
#endif

import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Foundation's `URLCache`, one of the systems the project started from, as a disk
/// store: on Linux swift-corelibs-foundation's (FoundationNetworking, part of the
/// toolchain), opened with `URLCache(memoryCapacity:diskCapacity:diskPath:)` (the
/// `directory:` initializer is Darwin-only). Memory capacity 0, so every read comes
/// from disk; a disk capacity that no batch reaches, so nothing is evicted.
///
/// A key is the path of a request to `http://kvcache-bench.invalid/`; its value is
/// the body of a 200 response stored with the `.allowed` policy. corelibs writes
/// each response to its own file, `<seconds>.<base64 of host, port and path>
/// .storedcachedurlresponse`, encoded with `NSKeyedArchiver` (written atomically:
/// a temporary file and a rename), and finds a key's file by **listing the whole
/// directory on every read**. Every store lists it twice: once reading each
/// file's size to evict down to the capacity, once to remove older files of the
/// same key. A set and a get therefore cost time in proportion to the number of
/// entries, so its batches are kept small (`batchLimit`) and the tables say so.
final class URLCacheStrategy: DiskStrategy {
    /// Operations per batch at most: the cost of each grows with the entries stored,
    /// and archiving or unarchiving a value costs about 0.2-0.4 ms per KB here, so up
    /// to 100 operations and 512 KB per batch, at least 2 (docs/BENCHMARKS.md).
    static func batchLimit(valueSize: Int) -> Int {
        min(100, max(2, (512 << 10) / max(1, valueSize)))
    }

    static let kind = DiskStrategyKind(
        name: "URLCache (Foundation)",
        open: { try URLCacheStrategy(directory: $0) },
        inOpenTime: false,
        batchLimit: { batchLimit(valueSize: $0) },
        note: "URLCache (Foundation) ran small batches (up to 100 operations and 512 KB, the count in "
            + "brackets): corelibs lists its whole directory on every store and read, and reads every "
            + "file's size on a store, so each operation costs more the more entries there are")

    private static let base = URL(string: "http://kvcache-bench.invalid/")!

    private let cache: URLCache

    init(directory: URL) throws {
        cache = URLCache(memoryCapacity: 0, diskCapacity: 1 << 40, diskPath: directory.path)
    }

    private func request(_ key: String) -> URLRequest {
        URLRequest(url: Self.base.appendingPathComponent(key))
    }

    func setValue(_ data: Data, forKey key: String) throws {
        let request = request(key)
        guard let response = HTTPURLResponse(url: request.url!, statusCode: 200, httpVersion: "HTTP/1.1",
                                             headerFields: ["Content-Length": String(data.count)]) else {
            throw ValidationFailure("URLCache: cannot make a response for \(key)")
        }
        cache.storeCachedResponse(CachedURLResponse(response: response, data: data, userInfo: nil,
                                                    storagePolicy: .allowed), for: request)
    }

    func value(forKey key: String) throws -> Data? {
        cache.cachedResponse(for: request(key))?.data
    }

    /// Stores are synchronous (an atomic write each); there is nothing to commit.
    func flush() throws {}

    func close() {}
}

#if HTTP
import Foundation
import HTTPTypes
import KVCache

/// The common hit, answered without the general path's steps: a hit is most of what a cache
/// serves, and it should cost little more than a read of the memory level.
extension HTTPCache {
    /// A fresh stored response to a GET or HEAD that asks nothing of the cache (no
    /// `Cache-Control`, `Pragma`, range or conditions), when its record is in the memory
    /// level and its body in the record: the answer the general path gives such a request,
    /// found without suspending or building its key. Nil sends the request down the general path.
    func freshHit(for request: HTTPRequest) -> HTTPCacheResponse? {
        let method = request.method
        let isHead = method == .head
        guard isHead || method == .get else { return nil }
        for field in request.headerFields {
            switch field.name {
            case .cacheControl, .pragmaField, .range, .ifNoneMatch, .ifModifiedSince: return nil
            default: continue
            }
        }
        // The key's bytes are looked up where they are built: a hit makes no `String`.
        guard let found = withKeyBytes(of: request, { storage.memory.value(forKeyBytes: $0) }), let record = found
        else { return nil }
        return Self.freshAnswer(in: record, to: request, isHead: isHead, now: now,
                                mode: configuration.mode, heuristic: configuration.heuristic)
    }

    /// The answer `freshHit(for:)` gives from `record`, or nil. The stored response is read
    /// without being retained: only what the answer needs is copied out.
    private static func freshAnswer(in record: HTTPCacheRecord, to request: HTTPRequest, isHead: Bool,
                                    now: Double, mode: Mode, heuristic: Heuristic) -> HTTPCacheResponse? {
        guard let only = record.onlyVariant else {
            return record.selectIndex(for: request).flatMap {
                freshAnswer(from: record[$0], isHead: isHead, now: now, mode: mode, heuristic: heuristic)
            }
        }
        return Unmanaged.passUnretained(only)._withUnsafeGuaranteedRef { stored in
            guard stored.varyValues.isEmpty || stored.matches(request) else { return nil }
            return freshAnswer(from: stored, isHead: isHead, now: now, mode: mode, heuristic: heuristic)
        }
    }

    /// The answer from one stored response when it is fresh and its body is in the record,
    /// built in place: each copy of its response or body on the way would retain them again.
    @inline(__always)
    private static func freshAnswer(from stored: StoredResponse, isHead: Bool, now: Double, mode: Mode,
                                    heuristic: Heuristic) -> HTTPCacheResponse? {
        guard case .bytes(let body) = stored.body, !stored.requiresValidation else { return nil }
        let lifetime = Freshness.lifetime(of: stored, mode: mode, heuristic: heuristic)
        let age = Freshness.age(of: stored, now: now)
        guard lifetime > age else { return nil }
        return HTTPCacheResponse(response: stored.response(age: age), body: isHead ? Data() : body, outcome: .hit)
    }
}
#endif

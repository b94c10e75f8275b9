#if HTTP
import KVCache

/// How old a stored response is and how long it stays fresh (RFC 9111 §4.2), for one mode.
struct Freshness: Sendable {
    /// Seconds the response stays fresh from its generation (§4.2.1).
    let lifetime: Double
    /// Its current age in seconds (§4.2.3).
    let age: Double
    let stored: StoredResponse

    init(of stored: StoredResponse, mode: HTTPCache.Mode, heuristic: HTTPCache.Heuristic, now: Double) {
        self.stored = stored
        lifetime = Self.lifetime(of: stored, mode: mode, heuristic: heuristic)
        age = Self.age(of: stored, now: now)
    }

    /// Its age when it arrived plus the time since (§4.2.3).
    static func age(of stored: StoredResponse, now: Double) -> Double {
        stored.correctedInitialAge + max(0, now - stored.responseTime)
    }

    var cacheControl: CacheControl { stored.cacheControl }
    /// `no-cache` on the response: every use needs a successful validation (§5.2.2.4).
    var requiresValidation: Bool { stored.requiresValidation }
    var isFresh: Bool { lifetime > age }
    /// Seconds past its lifetime (0 while fresh).
    var staleness: Double { max(0, age - lifetime) }

    /// Whether a stale response may be served without validation (§4.2.4): not when the
    /// response says it must be revalidated.
    func mayServeStale(mode: HTTPCache.Mode) -> Bool {
        !(mode == .shared ? stored.forbidsStaleWhenShared : stored.forbidsStale)
    }

    /// `s-maxage` (shared only), `max-age`, `Expires` against `Date`, or else heuristic
    /// freshness: a fraction of the time since `Last-Modified` (§4.2.1, §4.2.2).
    static func lifetime(of stored: StoredResponse, mode: HTTPCache.Mode, heuristic: HTTPCache.Heuristic) -> Double {
        if let explicit = mode == .shared ? stored.sharedLifetime : stored.privateLifetime { return explicit }
        guard heuristic.fraction > 0, let span = stored.heuristicSpan else { return 0 }
        return min(span * heuristic.fraction, heuristic.maximum.seconds)
    }
}
#endif

#if HTTP
import KVCache

/// How old a stored response is and how long it stays fresh (RFC 9111 §4.2), for one mode.
struct Freshness: Sendable {
    /// Seconds the response stays fresh from its generation (§4.2.1).
    let lifetime: Double
    /// Its current age in seconds (§4.2.3).
    let age: Double
    let cacheControl: CacheControl

    init(of stored: StoredResponse, mode: HTTPCache.Mode, heuristic: HTTPCache.Heuristic, now: Double) {
        cacheControl = stored.cacheControl
        lifetime = Self.lifetime(of: stored, cacheControl: cacheControl, mode: mode, heuristic: heuristic)
        age = Self.age(of: stored, now: now)
    }

    var isFresh: Bool { lifetime > age }
    /// Seconds past its lifetime (0 while fresh).
    var staleness: Double { max(0, age - lifetime) }

    /// Whether a stale response may be served without validation (§4.2.4): not when the
    /// response says it must be revalidated.
    func mayServeStale(mode: HTTPCache.Mode) -> Bool {
        if cacheControl.has("must-revalidate") || cacheControl.has("no-cache") { return false }
        if mode == .shared && (cacheControl.has("proxy-revalidate") || cacheControl.has("s-maxage")) { return false }
        return true
    }

    static func lifetime(of stored: StoredResponse, cacheControl: CacheControl, mode: HTTPCache.Mode,
                         heuristic: HTTPCache.Heuristic) -> Double {
        if mode == .shared, let sMaxAge = cacheControl.seconds("s-maxage") {
            return Double(sMaxAge.value ?? 0)
        }
        if let maxAge = cacheControl.seconds("max-age") {
            return Double(maxAge.value ?? 0)
        }
        let expiresValues = stored.values("expires")
        if !expiresValues.isEmpty {
            // An invalid date, "0" among them, means already expired (§5.3).
            guard let expires = HTTPDate.parse(expiresValues[0]) else { return 0 }
            return max(0, expires - stored.date)
        }
        // Heuristic freshness (§4.2.2): only for the status codes defined as heuristically
        // cacheable, or with `public`, and only from Last-Modified.
        guard heuristic.fraction > 0,
              HTTPCache.heuristicallyCacheable.contains(stored.status) || cacheControl.has("public"),
              let lastModified = stored.values("last-modified").first.flatMap(HTTPDate.parse)
        else { return 0 }
        let date = stored.date
        guard date > lastModified else { return 0 }
        return min((date - lastModified) * heuristic.fraction, heuristic.maximum.seconds)
    }

    static func age(of stored: StoredResponse, now: Double) -> Double {
        stored.correctedInitialAge + max(0, now - stored.responseTime)
    }
}
#endif

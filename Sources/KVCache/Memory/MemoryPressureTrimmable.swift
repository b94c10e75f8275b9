/// A memory cache that gives memory back when the system runs short of it.
///
/// `MemoryPressureMonitor` asks every registered target to trim when pressure rises.
public protocol MemoryPressureTrimmable: AnyObject, Sendable {
    /// Removes entries, least valuable first, until at most `fraction` (0...1)
    /// of the current count and cost remain; `0` empties the cache. Throws
    /// `KVCacheError.invalidArgument` for a fraction outside 0...1.
    func trim(toFraction fraction: Double, reason: EvictionReason) throws
}

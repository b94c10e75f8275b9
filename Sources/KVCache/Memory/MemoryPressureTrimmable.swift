/// A cache that can give memory back when the system runs short of it.
///
/// A memory-pressure monitor holds such caches weakly and trims them harder
/// as pressure rises.
public protocol MemoryPressureTrimmable: AnyObject, Sendable {
    /// Evicts least recently used entries until at most `fraction` (0...1) of
    /// the current count and total cost remain; 0 empties the cache.
    func trim(toFraction fraction: Double, reason: EvictionReason)
}

#if Hummingbird
import Synchronization

/// Locks striped by key: one driver's writes to a key, and its reads of a value with its
/// expiration, take the key's stripe, so a `set` that keeps the current expiration reads
/// it and writes in one step as far as this process is concerned.
final class KeyStripes: Sendable {
    final class Stripe: Sendable {
        let mutex = Mutex(())
    }

    let stripes: [Stripe]

    init(count: Int = 64) {
        stripes = (0..<count).map { _ in Stripe() }
    }

    /// Runs `body` holding `key`'s stripe. Keys that are equal byte-wise are equal as
    /// Swift strings, so they share a stripe.
    func withLock<Result: Sendable>(forKey key: String, _ body: () throws -> Result) throws -> Result {
        let index = Int(UInt(bitPattern: key.hashValue) % UInt(stripes.count))
        return try stripes[index].mutex.withLock { _ in try body() }
    }
}
#endif

/// What a user writes in twenty lines when one lock is too few: 64 `Dictionary`
/// stripes, each behind its own mutex, picked by the key's hash. No eviction and no
/// recency bookkeeping; the bar for scaling with threads.
final class StripedDictionaryStrategy: MemoryStrategy, @unchecked Sendable {
    static let name = "Dictionary, 64 striped mutexes"
    static let stripeCount = 64

    private final class Stripe: @unchecked Sendable {
        let mutex = PthreadMutex()
        var storage: [String: SmallValue] = [:]
    }

    private let stripes = (0..<StripedDictionaryStrategy.stripeCount).map { _ in Stripe() }

    init(countLimit: Int?) {}

    private func stripe(for key: String) -> Stripe {
        stripes[Int(UInt(bitPattern: key.hashValue) % UInt(Self.stripeCount))]
    }

    func setValue(_ value: SmallValue, forKey key: String) {
        let stripe = stripe(for: key)
        stripe.mutex.withLock { stripe.storage[key] = value }
    }

    func value(forKey key: String) -> SmallValue? {
        let stripe = stripe(for: key)
        return stripe.mutex.withLock { stripe.storage[key] }
    }
}

import Foundation

/// Foundation's `NSCache`. On Linux (swift-corelibs-foundation) it is not an
/// LRU: entries sit in a list ordered by cost and eviction takes from its
/// head, and inserting with a cost walks that list. Values must be objects, so
/// each set boxes its value (what a caller pays); the `NSString` keys are made
/// before timing.
final class NSCacheStrategy: MemoryStrategy, @unchecked Sendable {
    static let name = "NSCache"

    final class Box {
        let value: SmallValue
        init(_ value: SmallValue) { self.value = value }
    }

    struct Key: @unchecked Sendable {
        let string: NSString
    }

    static func makeKey(_ string: String) -> Key { Key(string: NSString(string: string)) }

    private let cache = NSCache<NSString, Box>()

    init(countLimit: Int?) {
        if let countLimit { cache.countLimit = countLimit }
    }

    func setValue(_ value: SmallValue, forKey key: Key) {
        cache.setObject(Box(value), forKey: key.string)
    }

    func value(forKey key: Key) -> SmallValue? {
        cache.object(forKey: key.string)?.value
    }
}

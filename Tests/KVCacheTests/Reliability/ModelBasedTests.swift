import KVCacheTestSupport
import Foundation
import Testing
@testable import KVCache

/// Random sequences of get, set (inline and file, with and without expiration),
/// remove, contains, trims by count, size and age, removeExpired, clock advances,
/// reopen and removeAll, run against the disk cache and against a plain
/// Dictionary model with the same LRU and expiration rules. Fixed seeds; about
/// 50,000 operations by default, 1,000,000 with KVCACHE_LONG_TESTS=1. A divergence
/// reports the seed and the shortest failing prefix (found by bisection).
@Suite(.blockingOnItsOwnThread) struct ModelBasedTests {
    enum Operation: CustomStringConvertible {
        case get(Int), contains(Int), set(Int, size: Int, lifetime: Double?), remove(Int)
        case trimCount(Int), trimSize(Int64), trimAge(Double), removeExpired
        case advance(Double), reopen, removeAll, totals, keys

        var description: String {
            switch self {
            case .get(let key): return "get k\(key)"
            case .contains(let key): return "contains k\(key)"
            case .set(let key, let size, let lifetime): return "set k\(key) \(size) bytes, lifetime \(lifetime.map { "\($0)" } ?? "never")"
            case .remove(let key): return "remove k\(key)"
            case .trimCount(let count): return "trim(toCount: \(count))"
            case .trimSize(let size): return "trim(toSize: \(size))"
            case .trimAge(let age): return "trim(toAge: \(age))"
            case .removeExpired: return "removeExpired"
            case .advance(let seconds): return "clock += \(seconds)"
            case .reopen: return "reopen"
            case .removeAll: return "removeAll"
            case .totals: return "check totals"
            case .keys: return "check keys"
            }
        }
    }

    static let keySpace = 64
    static let inlineThreshold = 256

    static func operations(seed: UInt64, count: Int) -> [Operation] {
        var random = SeededGenerator(seed: seed)
        return (0..<count).map { _ in
            let key = Int.random(in: 0..<keySpace, using: &random)
            switch Int.random(in: 0..<1000, using: &random) {
            case 0..<330: return .get(key)
            case 330..<420: return .contains(key)
            case 420..<700:
                let size = Int.random(in: 0..<10, using: &random) < 8
                    ? Int.random(in: 0..<inlineThreshold, using: &random)
                    : Int.random(in: inlineThreshold...3_000, using: &random)
                let lifetime = Int.random(in: 0..<10, using: &random) < 3 ? Double(Int.random(in: 1...60, using: &random)) : nil
                return .set(key, size: size, lifetime: lifetime)
            case 700..<800: return .remove(key)
            case 800..<850: return .advance(Double(Int.random(in: 1...30, using: &random)))
            case 850..<865: return .trimCount(Int.random(in: 0...keySpace, using: &random))
            case 865..<880: return .trimSize(Int64.random(in: 0...40_000, using: &random))
            case 880..<890: return .trimAge(Double(Int.random(in: 0...120, using: &random)))
            case 890..<900: return .removeExpired
            case 900..<960: return .totals
            case 960..<995: return .keys
            case 995..<998: return .reopen
            default: return .removeAll
            }
        }
    }

    struct Entry {
        var value: Data
        var access: Double
        var deadline: Double?
    }

    /// Runs `operations` on a fresh cache and model; returns the first divergence.
    static func divergence(in operations: ArraySlice<Operation>) throws -> (index: Int, message: String)? {
        let dir = TemporaryDirectory("model")
        defer { dir.remove() }
        let clock = ManualClock()
        let configuration = DiskCache.Configuration.testing {
            $0.clock = clock.function
            $0.inlineThreshold = inlineThreshold
        }
        var cache = try DiskCache(directory: dir.url, configuration: configuration)
        defer { try? cache.close() }
        var model: [String: Entry] = [:]

        func removeOldest(while condition: () -> Bool) {
            while condition(), let oldest = model.min(by: { $0.value.access < $1.value.access }) {
                model[oldest.key] = nil
            }
        }

        for (index, operation) in zip(operations.indices, operations) {
            clock.advance(by: 0.001)  // every operation at its own time: LRU order has no ties
            let now = clock.wall
            func fail(_ message: String) -> (Int, String) { (index, "\(operation): \(message)") }
            switch operation {
            case .get(let number):
                let key = "k\(number)"
                var expected = model[key]
                if let entry = expected, let deadline = entry.deadline, deadline <= now {
                    model[key] = nil
                    expected = nil
                }
                model[key]?.access = now
                let actual = try cache.value(forKey: key)
                if actual != expected?.value {
                    return fail("got \(actual.map { "\($0.count) bytes" } ?? "nil"), expected "
                        + "\(expected.map { "\($0.value.count) bytes" } ?? "nil")")
                }
            case .contains(let number):
                let key = "k\(number)"
                let expected = model[key].map { entry in entry.deadline.map { $0 > now } ?? true } ?? false
                if try cache.contains(key) != expected { return fail("expected \(expected)") }
            case .set(let number, let size, let lifetime):
                let key = "k\(number)"
                let value = bytes(size, seed: UInt8(truncatingIfNeeded: index))
                try cache.setValue(value, forKey: key, expiration: lifetime.map { .after(.seconds($0)) } ?? .never)
                model[key] = Entry(value: value, access: now, deadline: lifetime.map { now + $0 })
            case .remove(let number):
                try cache.removeValue(forKey: "k\(number)")
                model["k\(number)"] = nil
            case .trimCount(let count):
                try cache.trim(toCount: count)
                removeOldest { model.count > count }
            case .trimSize(let size):
                try cache.trim(toSize: size)
                removeOldest { model.values.reduce(0) { $0 + Int64($1.value.count) } > size }
            case .trimAge(let age):
                try cache.trim(toAge: .seconds(age))
                model = model.filter { $0.value.access >= now - age }
            case .removeExpired:
                try cache.removeExpired()
                model = model.filter { entry in entry.value.deadline.map { $0 > now } ?? true }
            case .advance(let seconds):
                clock.advance(by: seconds)
            case .reopen:
                try cache.close()
                cache = try DiskCache(directory: dir.url, configuration: configuration)
            case .removeAll:
                try cache.removeAll()
                model = [:]
            case .totals:
                let count = try cache.totalCount
                let size = try cache.totalSize
                let expectedSize = model.values.reduce(0) { $0 + Int64($1.value.count) }
                if count != model.count || size != expectedSize {
                    return fail("totals \(count) entries, \(size) bytes; model \(model.count), \(expectedSize)")
                }
            case .keys:
                var keys: [String] = []
                while let page = Optional(try cache.keys(after: keys.last, limit: 7)), !page.isEmpty {
                    keys += page
                }
                let expected = model.filter { entry in entry.value.deadline.map { $0 > now } ?? true }.keys
                    .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                if keys != expected { return fail("keys \(keys), expected \(expected)") }
            }
        }
        return nil
    }

    /// The shortest prefix of `operations` that still diverges (bisection on its length).
    static func shortestFailingPrefix(_ operations: [Operation], failingAt index: Int) throws -> Int {
        var low = 1
        var high = index + 1
        while low < high {
            let middle = (low + high) / 2
            if try divergence(in: operations[0..<middle]) != nil { high = middle } else { low = middle + 1 }
        }
        return high
    }

    static func check(seed: UInt64, count: Int) throws {
        let operations = operations(seed: seed, count: count)
        guard let (index, message) = try divergence(in: operations[...]) else { return }
        let length = try shortestFailingPrefix(operations, failingAt: index)
        let tail = operations[max(0, length - 8)..<length].map(\.description).joined(separator: "\n  ")
        Issue.record("""
            the disk cache diverged from the model (seed \(seed), operation \(index)): \(message)
            shortest failing prefix: \(length) operations (replay: KVCACHE_SEED=\(seed)); its last ones:
              \(tail)
            """)
    }

    @Test func randomOperationsMatchADictionaryModel() throws {
        let base = Reliability.seed(default: 1)
        let seeds = Reliability.isLong ? 40 : 2
        let perSeed = 25_000
        for offset in 0..<UInt64(seeds) { try Self.check(seed: base &+ offset, count: perSeed) }
        Reliability.report("model: \(seeds) seeds x \(perSeed) operations = \(seeds * perSeed), first seed \(base)")
    }
}

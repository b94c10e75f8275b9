#if Hummingbird
import Foundation
import Hummingbird
import KVCache
import KVCacheHummingbird
import Testing

/// The `PersistDriver` contract called directly, on a real directory.
@Suite struct PersistDriverContractTests {
    func withDriver(
        configuration: Cache<Data>.Configuration = KVCachePersistDriver.defaultConfiguration,
        _ body: (KVCachePersistDriver) async throws -> Void
    ) async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persist = try KVCachePersistDriver(directory: directory.url, configuration: configuration)
        do {
            try await body(persist)
        } catch {
            try? await persist.shutdown()
            throw error
        }
        try await persist.shutdown()
    }

    @Test func createThrowsDuplicateAndKeepsTheFirstValue() async throws {
        try await withDriver { persist in
            try await persist.create(key: "k", value: "first", expires: nil)
            await #expect(throws: PersistError.duplicate) {
                try await persist.create(key: "k", value: "second", expires: nil)
            }
            #expect(try await persist.get(key: "k", as: String.self) == "first")
        }
    }

    @Test func createOnAnExpiredKeySucceeds() async throws {
        try await withDriver { persist in
            try await persist.set(key: "k", value: "old", expires: .zero)
            try await persist.create(key: "k", value: "new", expires: nil)
            #expect(try await persist.get(key: "k", as: String.self) == "new")
        }
    }

    @Test func concurrentCreatesStoreOnce() async throws {
        try await withDriver { persist in
            let outcomes = try await withThrowingTaskGroup(of: Int?.self) { group in
                for index in 0..<16 {
                    group.addTask {
                        do {
                            try await persist.create(key: "once", value: index, expires: nil)
                            return index
                        } catch let error as PersistError where error == .duplicate {
                            return nil
                        }
                    }
                }
                var winners: [Int] = []
                for try await outcome in group { if let outcome { winners.append(outcome) } }
                return winners
            }
            #expect(outcomes.count == 1)
            #expect(try await persist.get(key: "once", as: Int.self) == outcomes.first)
        }
    }

    @Test func setWithoutExpirationKeepsTheCurrentOne() async throws {
        try await withDriver { persist in
            let start = ContinuousClock.now
            try await persist.set(key: "k", value: 1, expires: .seconds(100))
            try await persist.set(key: "k", value: 2, expires: nil)
            let entry = try #require(try await persist.getWithTTL(key: "k", as: Int.self))
            #expect(entry.object == 2)
            let ttl = try #require(entry.ttl)
            // What is left of the first set's 100 s, however long the machine stalled the calls.
            #expect(ttl > .seconds(99) - (ContinuousClock.now - start) && ttl <= .seconds(100))
        }
    }

    /// A `set` without expiration racing a `set` with one: whichever lands last, the key ends
    /// with the later expiration (never the one read before the other set replaced it).
    @Test func setWithoutExpirationIsAtomicWithOtherSets() async throws {
        try await withDriver { persist in
            for round in 0..<200 {
                try await persist.set(key: "k", value: 0, expires: .seconds(100))
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask { try await persist.set(key: "k", value: 1, expires: nil) }
                    group.addTask { try await persist.set(key: "k", value: 2, expires: .seconds(1_000)) }
                    try await group.waitForAll()
                }
                let entry = try #require(try await persist.getWithTTL(key: "k", as: Int.self))
                let ttl = try #require(entry.ttl)
                #expect(ttl > .seconds(900), "round \(round): value \(entry.object)")
                if ttl <= .seconds(900) { break }
            }
        }
    }

    @Test func setWithoutExpirationOnAKeyWithoutOneNeverExpires() async throws {
        try await withDriver { persist in
            try await persist.set(key: "k", value: 1, expires: nil)
            try await persist.set(key: "k", value: 2, expires: nil)
            let entry = try #require(try await persist.getWithTTL(key: "k", as: Int.self))
            #expect(entry.object == 2)
            #expect(entry.ttl == nil)
        }
    }

    /// An expired key counts as absent: its old expiration is not kept.
    @Test func setWithoutExpirationOnAnExpiredKeyNeverExpires() async throws {
        try await withDriver { persist in
            try await persist.set(key: "k", value: 1, expires: .zero)
            try await persist.set(key: "k", value: 2, expires: nil)
            let entry = try #require(try await persist.getWithTTL(key: "k", as: Int.self))
            #expect(entry.object == 2)
            #expect(entry.ttl == nil)
        }
    }

    @Test func setWithAnExpirationReplacesTheCurrentOne() async throws {
        try await withDriver { persist in
            try await persist.set(key: "k", value: 1, expires: .seconds(100))
            let start = ContinuousClock.now
            try await persist.set(key: "k", value: 2, expires: .seconds(1_000))
            let ttl = try #require(try await persist.getWithTTL(key: "k", as: Int.self)?.ttl)
            #expect(ttl > .seconds(999) - (ContinuousClock.now - start))
        }
    }

    @Test(arguments: [Duration.zero, .nanoseconds(-1), .seconds(-3_600), .seconds(Int64.min)])
    func zeroOrNegativeExpirationIsAbsentAtOnce(_ expires: Duration) async throws {
        try await withDriver { persist in
            try await persist.set(key: "set", value: "v", expires: expires)
            #expect(try await persist.get(key: "set", as: String.self) == nil)
            #expect(try await persist.getWithTTL(key: "set", as: String.self) == nil)
            try await persist.create(key: "create", value: "v", expires: expires)
            #expect(try await persist.get(key: "create", as: String.self) == nil)
        }
    }

    @Test(arguments: [Duration.seconds(Int64.max), .seconds(1e15), Duration(secondsComponent: Int64.max, attosecondsComponent: 999_999_999_999_999_999)])
    func hugeExpirationDoesNotTrap(_ expires: Duration) async throws {
        try await withDriver { persist in
            try await persist.set(key: "k", value: "v", expires: expires)
            let entry = try #require(try await persist.getWithTTL(key: "k", as: String.self))
            #expect(entry.object == "v")
            let ttl = try #require(entry.ttl)
            #expect(ttl > .seconds(1e14))
        }
    }

    @Test func getAsAnotherTypeIsNilAndKeepsTheValue() async throws {
        try await withDriver { persist in
            try await persist.set(key: "k", value: TestCodable(buffer: "hello"), expires: nil)
            #expect(try await persist.get(key: "k", as: Int.self) == nil)
            #expect(try await persist.getWithTTL(key: "k", as: [String].self) == nil)
            #expect(try await persist.get(key: "k", as: TestCodable.self) == TestCodable(buffer: "hello"))
            // Also once the value has left memory and is read from disk.
            persist.cache.memory.removeAll()
            #expect(try await persist.get(key: "k", as: Int.self) == nil)
            #expect(try await persist.get(key: "k", as: TestCodable.self) == TestCodable(buffer: "hello"))
        }
    }

    @Test func valuesOfDifferentTypesShareTheCache() async throws {
        try await withDriver { persist in
            try await persist.set(key: "int", value: 42, expires: nil)
            try await persist.set(key: "string", value: "s", expires: nil)
            try await persist.set(key: "array", value: [1.5, 2.5], expires: nil)
            try await persist.set(key: "struct", value: TestCodable(buffer: "b"), expires: nil)
            #expect(try await persist.get(key: "int", as: Int.self) == 42)
            #expect(try await persist.get(key: "string", as: String.self) == "s")
            #expect(try await persist.get(key: "array", as: [Double].self) == [1.5, 2.5])
            #expect(try await persist.get(key: "struct", as: TestCodable.self) == TestCodable(buffer: "b"))
        }
    }

    @Test func removeMakesTheKeyAbsent() async throws {
        try await withDriver { persist in
            try await persist.set(key: "k", value: 1, expires: .seconds(60))
            try await persist.remove(key: "k")
            #expect(try await persist.get(key: "k", as: Int.self) == nil)
            try await persist.remove(key: "never-stored")
            try await persist.create(key: "k", value: 2, expires: nil)
            #expect(try await persist.get(key: "k", as: Int.self) == 2)
        }
    }

    @Test func aBadKeyThrowsATypedError() async throws {
        try await withDriver { persist in
            await #expect(throws: KVCacheError.self) { try await persist.set(key: "", value: 1, expires: nil) }
            await #expect(throws: KVCacheError.self) {
                try await persist.create(key: String(repeating: "k", count: 100_000), value: 1, expires: nil)
            }
        }
    }

    @Test func anUnencodableValueThrowsTheCodersError() async throws {
        try await withDriver { persist in
            await #expect(throws: EncodingError.self) { try await persist.set(key: "k", value: Double.nan, expires: nil) }
            let stored = try await persist.get(key: "k", as: Double.self)
            #expect(stored == nil)
        }
    }

    @Test func shutdownFlushesAndClosesAndValuesSurviveAReopen() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persist = try KVCachePersistDriver(directory: directory.url)
        try await persist.set(key: "kept", value: "v", expires: .seconds(3_600))
        try await persist.set(key: "forever", value: 7, expires: nil)
        try await persist.shutdown()
        try await persist.shutdown()  // a second call does nothing
        await #expect(throws: KVCacheError.self) { try await persist.set(key: "after", value: 1, expires: nil) }

        let reopened = try KVCachePersistDriver(directory: directory.url)
        let kept = try #require(try await reopened.getWithTTL(key: "kept", as: String.self))
        #expect(kept.object == "v")
        #expect(try #require(kept.ttl) > .seconds(3_500))
        #expect(try await reopened.get(key: "forever", as: Int.self) == 7)
        try await reopened.shutdown()
    }

    @Test func aGivenCacheIsFlushedButNotClosed() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let cache = try Cache<Data>(directory: directory.url, coder: DataCoder())
        let persist = KVCachePersistDriver(cache: cache)
        try await persist.set(key: "k", value: "v", expires: nil)
        try await persist.shutdown()
        let stored = try await cache.value(forKey: "k")
        #expect(stored == Data("\"v\"".utf8))
        try cache.close()
    }

    @Test func aCustomCoderIsUsed() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let persist = try KVCachePersistDriver(directory: directory.url, coder: PropertyListPersistCoder())
        try await persist.set(key: "k", value: TestCodable(buffer: "b"), expires: nil)
        let stored = try #require(try await persist.cache.value(forKey: "k"))
        #expect(stored.starts(with: Data("bplist".utf8)))
        #expect(try await persist.get(key: "k", as: TestCodable.self) == TestCodable(buffer: "b"))
        try await persist.shutdown()
    }

    /// Memory stays within its count limit however many distinct keys are stored; the
    /// values evicted from memory are read back from disk.
    @Test func memoryStaysWithinItsLimitUnderManyDistinctKeys() async throws {
        var configuration = KVCachePersistDriver.defaultConfiguration
        configuration.memory.countLimit = 100
        try await withDriver(configuration: configuration) { persist in
            for index in 0..<5_000 {
                try await persist.set(key: "key-\(index)", value: index, expires: nil)
                #expect(persist.cache.memory.count <= 100)
            }
            #expect(persist.cache.memory.count <= 100)
            #expect(try await persist.get(key: "key-0", as: Int.self) == 0)
            #expect(try await persist.get(key: "key-4999", as: Int.self) == 4_999)
            #expect(try persist.cache.disk.totalCount == 5_000)
        }
    }
}
#endif

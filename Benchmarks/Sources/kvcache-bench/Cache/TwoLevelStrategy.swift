import Foundation
import KVCache

/// A memory level in front of a disk level, used the way an application would.
protocol TwoLevelStrategy: AnyObject {
    func value(forKey key: String) throws -> Data?
    func setValue(_ value: Data, forKey key: String) throws
    /// Ends the timed part: background writes land, pending commits are made.
    func finish() throws
    func close()
}

/// How each strategy is opened for one run.
struct TwoLevelStrategyKind: Sendable {
    var name: String
    var isFloor: Bool
    var open: @Sendable (URL, MemoryCache<String, Data>.Configuration) throws -> any TwoLevelStrategy
}

/// The floor: `MemoryCache` and `DiskCache` used by hand, memory first, then
/// disk, promoting a disk hit into memory with its size as cost.
final class HandUsedLevels: TwoLevelStrategy {
    static let kind = TwoLevelStrategyKind(name: "levels by hand", isFloor: true) { directory, memory in
        HandUsedLevels(memory: try MemoryCache(configuration: memory), disk: try DiskCache(directory: directory))
    }

    let memory: MemoryCache<String, Data>
    let disk: DiskCache

    init(memory: MemoryCache<String, Data>, disk: DiskCache) {
        self.memory = memory
        self.disk = disk
    }

    func value(forKey key: String) throws -> Data? {
        if let value = memory.value(forKey: key) { return value }
        guard let value = try disk.value(forKey: key) else { return nil }
        memory.setValue(value, forKey: key, cost: Int64(value.count))
        return value
    }

    func setValue(_ value: Data, forKey key: String) throws {
        try disk.setValue(value, forKey: key)
        memory.setValue(value, forKey: key, cost: Int64(value.count))
    }

    func finish() throws { try disk.flush() }
    func close() { try? disk.close() }
}

/// The `Cache` facade over the same two levels.
final class FacadeStrategy: TwoLevelStrategy {
    static func kind(_ diskWrite: Cache<Data>.DiskWrite) -> TwoLevelStrategyKind {
        let name = diskWrite == .background ? "Cache (background disk writes)" : "Cache"
        return TwoLevelStrategyKind(name: name, isFloor: false) { directory, memory in
            FacadeStrategy(try Cache<Data>(directory: directory, configuration: .init(memory: memory)), diskWrite)
        }
    }

    let cache: Cache<Data>
    let diskWrite: Cache<Data>.DiskWrite

    init(_ cache: Cache<Data>, _ diskWrite: Cache<Data>.DiskWrite) {
        self.cache = cache
        self.diskWrite = diskWrite
    }

    func value(forKey key: String) throws -> Data? { try cache.value(forKey: key) }

    func setValue(_ value: Data, forKey key: String) throws {
        try cache.setValue(value, forKey: key, diskWrite: diskWrite)
    }

    func finish() throws { try cache.flush() }
    func close() { try? cache.disk.close() }
}

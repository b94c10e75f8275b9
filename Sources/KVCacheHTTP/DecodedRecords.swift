#if HTTP
import Foundation
import KVCache

/// The records last decoded, by key, with the bytes they were decoded from: a hit whose
/// storage returns those same bytes (the memory level gives back the value it holds) skips
/// decoding them again. Any other bytes under the key, from the disk, another process or a
/// newer write, are decoded as usual; so the storage stays the only source of truth.
final class DecodedRecords: Sendable {
    private final class Entry: Sendable {
        let bytes: Data
        let record: StoredResponses

        init(bytes: Data, record: StoredResponses) {
            self.bytes = bytes
            self.record = record
        }
    }

    /// Bounded by count and by the bytes it keeps alive (shared with the memory level's
    /// values while both hold them).
    private let entries: MemoryCache<String, Entry>

    init(countLimit: Int = 4_096, byteLimit: Int64 = 32 << 20) {
        // The limits are positive constants, so the configuration is valid.
        entries = try! MemoryCache(configuration: .init(countLimit: countLimit, costLimit: byteLimit, autoTrimInterval: nil))
    }

    /// The record in `bytes`, read under `key`: the one decoded before if these are the same
    /// bytes, otherwise decoded now (nil when they are not a record).
    func record(forKey key: String, in bytes: Data) -> StoredResponses? {
        if let entry = entries.value(forKey: key), entry.bytes.sharesStorage(with: bytes) { return entry.record }
        guard let record = StoredResponses(decoding: bytes) else {
            entries.removeValue(forKey: key)
            return nil
        }
        entries.setValue(Entry(bytes: bytes, record: record), forKey: key, cost: Int64(bytes.count))
        return record
    }

    func forget(_ key: String) {
        entries.removeValue(forKey: key)
    }
}

extension Data {
    /// Whether both are views of the same bytes in memory: a copy of a value, not an equal one.
    /// Holding one keeps its buffer alive, so another buffer cannot take its address.
    func sharesStorage(with other: Data) -> Bool {
        count == other.count && count > 0 && withUnsafeBytes { mine in
            other.withUnsafeBytes { theirs in mine.baseAddress == theirs.baseAddress }
        }
    }
}
#endif

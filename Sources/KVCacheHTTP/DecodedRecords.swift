#if HTTP
import Foundation
import KVCache

/// The records last decoded, by the bytes they were decoded from: a hit whose storage returns
/// those same bytes in memory (the memory level gives back the value it holds) skips decoding
/// them again. Other bytes, from the disk, another process or a newer write, are decoded as
/// usual; so the storage stays the only source of truth, and nothing needs forgetting when a
/// URL's response changes.
final class DecodedRecords: Sendable {
    private final class Entry: Sendable {
        let bytes: Data
        let record: StoredResponses

        init(bytes: Data, record: StoredResponses) {
            self.bytes = bytes
            self.record = record
        }
    }

    /// By the address of the bytes: an entry holds its bytes, so no other buffer can take
    /// that address while it is here. Bounded by count and by the bytes it keeps alive
    /// (shared with the memory level's values while both hold them).
    private let entries: MemoryCache<Int, Entry>

    init(countLimit: Int = 4_096, byteLimit: Int64 = 32 << 20) {
        // The limits are positive constants, so the configuration is valid.
        entries = try! MemoryCache(configuration: .init(countLimit: countLimit, costLimit: byteLimit, autoTrimInterval: nil))
    }

    /// The record in `bytes`: the one decoded before if these are the same bytes in memory,
    /// otherwise decoded now (nil when they are not a record).
    func record(in bytes: Data) -> StoredResponses? {
        guard let address = bytes.heapAddress else { return StoredResponses(decoding: bytes) }
        if let entry = entries.value(forKey: address), entry.bytes.sharesStorage(with: bytes) { return entry.record }
        guard let record = StoredResponses(decoding: bytes) else { return nil }
        entries.setValue(Entry(bytes: bytes, record: record), forKey: address, cost: Int64(bytes.count))
        return record
    }
}

extension Data {
    /// Where its bytes are, for bytes that live in a buffer of their own: not for the few
    /// bytes `Data` keeps inline, which a call sees through a temporary copy.
    var heapAddress: Int? {
        guard count > 32 else { return nil }
        return withUnsafeBytes { $0.baseAddress.map { Int(bitPattern: $0) } }
    }

    /// Whether both are views of the same bytes in memory: a copy of a value, not an equal one.
    /// Holding one keeps its buffer alive, so another buffer cannot take its address.
    func sharesStorage(with other: Data) -> Bool {
        count == other.count && heapAddress.map { $0 == other.heapAddress } ?? false
    }
}
#endif

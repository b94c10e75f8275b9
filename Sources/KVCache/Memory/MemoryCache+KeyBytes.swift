import Foundation

extension MemoryCache where Key == ByteWiseKey {
    /// The value stored under the key whose UTF-8 bytes are `bytes`, as `value(forKey:)`
    /// finds it (a hit counts as a use), for a caller that assembles its keys from parts:
    /// a hit then builds no `String`. Bytes that are not UTF-8 name no key: nil.
    @inlinable
    func value(forKeyBytes bytes: UnsafeRawBufferPointer) -> Value? {
        if isAdaptive {
            // The key's hashes (`LRUStorage.hashes(of:withPolicyHash:)`), from its bytes;
            // `MemoryCacheKeyBytesTests` checks they find what keys stored.
            let (policyWord, tableWord) = ByteHash.hashPair(bytes, first: ByteHash.unseededStart, second: tableHashStart)
            let (hash, tableHash) = LRUStorage<Key, Value>.hashes(policyWord: policyWord, tableWord: tableWord)
            switch laneRead(hash: hash, tableHash: tableHash, { $0.entry(hash: tableHash, keyBytes: bytes) }) {
            case .hit(let value): return value
            case .miss: return nil
            case .needsCacheLock: break
            }
        }
        // The reads that need the cache's lock take the key as a string.
        guard let string = String(validating: bytes, as: UTF8.self) else { return nil }
        return value(forKey: ByteWiseKey(string))
    }
}

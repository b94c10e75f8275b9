import Foundation

extension MemoryCache where Key == ByteWiseKey {
    /// The value stored under the key whose UTF-8 bytes are `bytes`, as `value(forKey:)`
    /// finds it (a hit counts as a use), for a caller that assembles its keys from parts:
    /// a hit then builds no `String`. Bytes that are not UTF-8 name no key: nil.
    @inlinable
    func value(forKeyBytes bytes: UnsafeRawBufferPointer) -> Value? {
        if isAdaptive {
            // The same hashes as the key's (`PolicyHash.unseeded`, `TableStripe.hash(of:)`),
            // from its bytes; `MemoryCacheKeyBytesTests` checks they find what keys stored.
            let hash = PolicyHash<Key>.folded(ByteHash.hash(bytes, start: ByteHash.unseededStart))
            let tableHash = Int(truncatingIfNeeded: ByteHash.mix(ByteHash.hash(bytes, start: tableHashStart), ByteHash.secret1))
            switch laneRead(hash: hash, { $0.entry(hash: tableHash) { ByteWiseKey.bytesEqual($0.string, bytes) } }) {
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

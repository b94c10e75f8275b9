#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A key as a table stripe's dictionary holds it. Strings (and the ``Cache``'s
/// byte-wise keys) are placed by their `ByteHash` from a seed drawn once per process,
/// not by SipHash over their bytes, which costs about 370 instructions for a 30-byte
/// key: a third of a get hit. Equal keys still hash alike (strings by their canonical
/// bytes), and an attacker who cannot learn the seed cannot choose keys that collide.
/// Other keys hash as they do. The same size as the key.
@usableFromInline
struct TableKey<Key: Hashable>: Hashable {
    @usableFromInline let key: Key

    @inlinable
    init(_ key: Key) { self.key = key }

    @inlinable
    static func == (lhs: Self, rhs: Self) -> Bool { lhs.key == rhs.key }

    @inlinable
    func hash(into hasher: inout Hasher) {
        if Key.self == String.self || Key.self == ByteWiseKey.self {
            hasher.combine(bytesHash)
        } else {
            key.hash(into: &hasher)
        }
    }

    /// What the dictionary places the key by (`Hashable`'s underscored requirement, which
    /// `Dictionary` calls with its per-table `seed`). For strings and byte-wise keys:
    /// their word mixed with the seed, without `Hasher`'s SipHash rounds (about 130
    /// instructions more); the word's own seed is random per process. `hashValue` is
    /// this with seed 0, as for Swift's own types.
    @inlinable
    func _rawHashValue(seed: Int) -> Int {
        guard Key.self == String.self || Key.self == ByteWiseKey.self else { return key._rawHashValue(seed: seed) }
        return Int(truncatingIfNeeded: ByteHash.mix(bytesHash ^ UInt64(truncatingIfNeeded: seed), ByteHash.secret1))
    }

    /// The word a string or byte-wise key hashes as, read in place (a cast would copy,
    /// and retain, the key).
    @inlinable
    var bytesHash: UInt64 {
        withUnsafePointer(to: key) { pointer in
            // A `ByteWiseKey` is a string: the same layout.
            let string = UnsafeRawPointer(pointer).assumingMemoryBound(to: String.self)
            if Key.self == ByteWiseKey.self {
                return ByteHash.bytes(of: string.pointee, start: tableHashStart)
            }
            return ByteHash.canonical(string, start: tableHashStart)
        }
    }
}

/// The start state of the tables' byte hashes: from a random seed, drawn once per
/// process (a fixed one under `SWIFT_DETERMINISTIC_HASHING`, as Swift's own hashing,
/// so that profiles repeat).
@usableFromInline
let tableHashStart: UInt64 = ByteHash.start(
    seed: getenv("SWIFT_DETERMINISTIC_HASHING") == nil ? UInt64.random(in: .min ... .max) : 0)

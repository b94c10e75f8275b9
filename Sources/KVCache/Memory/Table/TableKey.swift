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
        if let hash = ByteHash.hash(ofKey: key, start: tableHashStart) {
            hasher.combine(hash)
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
        guard let hash = ByteHash.hash(ofKey: key, start: tableHashStart) else { return key._rawHashValue(seed: seed) }
        return Int(truncatingIfNeeded: ByteHash.mix(hash ^ UInt64(truncatingIfNeeded: seed), ByteHash.secret1))
    }
}

/// The start state of the tables' byte hashes: from a random seed, drawn once per
/// process (a fixed one under `SWIFT_DETERMINISTIC_HASHING`, as Swift's own hashing,
/// so that profiles repeat).
@usableFromInline
let tableHashStart: UInt64 = ByteHash.start(
    seed: getenv("SWIFT_DETERMINISTIC_HASHING") == nil ? UInt64.random(in: .min ... .max) : 0)

import Foundation

/// One manifest entry: a committed row as a read or a commit finds it, or a set waiting
/// in the write buffer (`PendingWrites.Write.set`). The disk level's one model of a row:
/// a new column is a field here, its binding in `ManifestBatch` and its selects.
struct ManifestRow: Sendable {
    /// The value's file in data/ (written in full before the row), or nil when inline.
    var filename: String?
    /// The inline bytes, when the row was read with them (metadata selects leave nil).
    var inline: Data?
    var size: Int64
    /// When the entry was last accessed (a pending set: when it was made).
    var accessed: Double
    /// When the entry expires, nil for never, as stored: an access may extend it (`deadline(lastAccess:extends:)`).
    var deadline: Double?
    /// What an access extends the deadline to, from the access (with `extendsExpirationOnAccess`).
    var lifetime: Double?
    /// The caller's extended data (pending sets; reads leave nil).
    var extendedData: Data? = nil

    /// Runs `statement` (`Manifest.selectMetadata`, on any connection) for `key`: the row
    /// without its inline bytes, or nil if there is none.
    static func selectMetadata(_ key: String, with statement: Statement) throws -> ManifestRow? {
        try statement.run { statement in
            try statement.bind(key, at: 1)
            guard try statement.step() else { return nil }
            return ManifestRow(filename: statement.string(at: 0), inline: nil, size: statement.int64(at: 1),
                               accessed: statement.double(at: 4), deadline: statement.optionalDouble(at: 2),
                               lifetime: statement.optionalDouble(at: 3))
        }
    }

    /// Inline data that is not the recorded size: never returned; `verify` reports it.
    var isDamaged: Bool { filename == nil && Int64(inline?.count ?? -1) != size }

    /// When the entry expires once an access at `lastAccess` (one not yet in the row,
    /// or nil) is counted: extended by the lifetime when `extends`. Nil for never.
    func deadline(lastAccess: Double?, extends: Bool) -> Double? {
        guard let deadline else { return nil }
        guard extends, let lifetime, let lastAccess else { return deadline }
        return max(deadline, lastAccess + lifetime)
    }

    /// Whether the entry, as stored, has not expired at `now` (a buffered access that
    /// extends it is `WriteBuffer.State.deadline(of:forKey:extends:)`'s to add).
    func isLive(at now: Double) -> Bool {
        deadline.map { $0 > now } ?? true
    }
}

import Foundation

extension DiskCache {
    /// What the disk level holds for one key (`info(forKey:)`).
    public struct EntryInfo: Sendable, Hashable {
        /// The value's size in bytes.
        public var size: Int64
        /// True when the value is in a file of its own, false when it is inline in the manifest.
        public var isInFile: Bool
        /// When the entry expires; nil if it never does.
        public var expirationDate: Date?
        /// With `extendsExpirationOnAccess`, how far a read moves the expiration
        /// ahead (seconds); nil for an entry without one.
        public var lifetime: Double?

        /// The time left before the entry expires, from `now`; nil if it never does.
        public func remainingLifetime(from now: Date = Date()) -> Double? {
            expirationDate.map { max(0, $0.timeIntervalSince(now)) }
        }
    }
}

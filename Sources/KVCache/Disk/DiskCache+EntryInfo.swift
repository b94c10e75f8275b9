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
        /// The duration of an ``Expiration/after(_:)`` expiration, which a read restarts
        /// under `extendsExpirationOnAccess`; nil for an entry stored with another.
        public var lifetime: Duration?

        /// The time left before the entry expires, from `now` (zero once it has passed);
        /// nil if it never expires.
        public func remainingLifetime(from now: Date = Date()) -> Duration? {
            expirationDate.map { .clamping(seconds: max(0, $0.timeIntervalSince(now))) }
        }
    }
}

import Foundation

/// What promoting a disk hit into memory needs besides the value.
@usableFromInline
struct Promotion {
    /// `WriteCoordinator.epoch` before the read: no promotion if a mutation ran since.
    @usableFromInline var epoch: UInt64 = 0
    @usableFromInline var cost: Int64 = 0
    /// The disk entry's, so the memory copy does not outlive it.
    @usableFromInline var expiration: Expiration = .never

    @usableFromInline init() {}
}

extension DiskCache {
    /// The value for `key` with its expiration, so `Cache` can promote a disk hit
    /// into memory without outliving the disk entry.
    func entry(forKey key: String) throws -> (data: Data, expiration: Expiration)? {
        try perform { try $0.entry(forKey: key) }
    }
}

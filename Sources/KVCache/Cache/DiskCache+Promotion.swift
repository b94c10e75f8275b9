import Foundation

extension DiskCache {
    /// The value for `key` with its expiration, so `Cache` can promote a disk hit
    /// into memory without outliving the disk entry.
    func entry(forKey key: String) throws -> (data: Data, expiration: Expiration)? {
        try perform { try $0.entry(forKey: key) }
    }
}

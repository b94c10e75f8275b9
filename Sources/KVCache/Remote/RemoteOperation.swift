import Foundation

/// A write, removal or touch a cache asked of its remote level: what the recovery queue
/// keeps when the call failed, and replays once the level answers again.
enum RemoteOperation: Sendable {
    /// Store `entry` (its expiration absolute) for `key`, and publish the change.
    case set(key: String, entry: RemoteEntry)
    /// Remove `key`, and publish the change.
    case remove(key: String)
    /// Give the remote copy of `key` this (absolute) expiration: read, then written again.
    case touch(key: String, expiration: Expiration)
    /// Remove every key with this prefix (every key for `""`), and publish the change.
    case removePrefix(String)

    /// The key, or nil for a removal by prefix.
    var key: String? {
        switch self {
        case .set(let key, _), .remove(let key), .touch(let key, _): key
        case .removePrefix: nil
        }
    }

    /// The bytes the queue holds for it: the value's for a set, the key's otherwise.
    var size: Int {
        switch self {
        case .set(let key, let entry): key.utf8.count + entry.data.count
        case .remove(let key), .touch(let key, _): key.utf8.count
        case .removePrefix(let prefix): prefix.utf8.count
        }
    }

    /// What it does, in words (for the logger).
    var description: String {
        switch self {
        case .set(let key, _): "writing \(key)"
        case .remove(let key): "removing \(key)"
        case .touch(let key, _): "touching \(key)"
        case .removePrefix(let prefix): "removing the keys with prefix \(prefix)"
        }
    }

    /// Runs it on `remote`. A value larger than the level keeps is not stored; its older
    /// remote copy is removed instead (`tooLarge` is called).
    func perform(on remote: any RemoteLevel, tooLarge: () -> Void) throws {
        switch self {
        case .set(let key, let entry):
            do {
                try remote.setEntry(entry, forKey: key)
            } catch let error as RemoteLevelError where error.code == .valueTooLarge {
                tooLarge()
                try remote.removeEntry(forKey: key)
            }
        case .remove(let key):
            try remote.removeEntry(forKey: key)
        case .touch(let key, let expiration):
            guard var entry = try remote.entry(forKey: key) else { return }
            entry.expiration = expiration
            try remote.setEntry(entry, forKey: key)
        case .removePrefix(let prefix):
            try remote.removeEntries(withPrefix: prefix)
        }
    }

    /// Whether a call that failed with `error` is worth replaying: the level could not be
    /// reached, or failed fast (its breaker open). An error reply or bytes it refused
    /// would fail again.
    static func isRetryable(_ error: any Error) -> Bool {
        guard let error = error as? RemoteLevelError else { return false }
        return error.code == .unavailable || error.code == .circuitOpen
    }
}

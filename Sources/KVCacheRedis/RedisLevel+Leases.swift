import Foundation
import KVCache

/// Leases (a distributed single flight): `SET <lease key> <token> NX PX <ms>` takes one, a
/// compare-and-delete script releases it only for the holder whose token it still is.
extension RedisLevel {
    /// The longest lease: a day.
    public static let longestLease: Duration = .seconds(86_400)

    /// Takes the lease on `key` for `duration` (`SET NX PX` on `kvcache-lease:<namespace>:<key>`)
    /// unless another holder has it: the lease, or nil. Throws `RemoteLevelError`
    /// (`.invalidArgument` for a duration not more than zero or longer than a day).
    public func acquireLease(forKey key: String, duration: Duration) throws -> RemoteLease? {
        guard duration > .zero && duration <= Self.longestLease else {
            throw RemoteLevelError(.invalidArgument, "a lease lasts more than zero and at most a day, not \(duration)")
        }
        var random = SystemRandomNumberGenerator()
        let token = Data((0..<2).map { _ in String(random.next() as UInt64, radix: 16) }.joined(separator: "-").utf8)
        let milliseconds = max(1, Int64((duration.seconds * 1000).rounded(.up)))
        let lease = leaseKey(key)
        let reply = try run(key: lease, [[Data("SET".utf8), lease, token, Data("NX".utf8), Data("PX".utf8),
                                           Data(String(milliseconds).utf8)]])[0]
        try check(reply)
        switch reply {
        case .status("OK"):
            return RemoteLease(key: key, token: token)
        case .null:
            return nil
        default:
            throw failed(RemoteLevelError(.unexpectedReply, "SET NX answered \(reply)"))
        }
    }

    /// Releases `lease` if its token still holds the lease key (one `EVAL` of a
    /// compare-and-delete script): a lease that expired and was taken by another stays theirs.
    public func releaseLease(_ lease: RemoteLease) throws {
        let key = leaseKey(lease.key)
        let reply = try run(key: key, [[Data("EVAL".utf8), Data(Self.releaseScript.utf8), Data("1".utf8), key, lease.token]])[0]
        try check(reply)
        guard case .integer = reply else {
            throw failed(RemoteLevelError(.unexpectedReply, "the lease release answered \(reply)"))
        }
    }

    /// Where `key`'s lease lives: beside the value keys, never one of them (their prefix is
    /// `kvcache:`), with the same hash tag under `groupsKeys`.
    func leaseKey(_ key: String) -> Data {
        leasePrefix + Data(key.utf8)
    }

    /// Deletes the lease key only if it still holds the token. A string, not a `Data`: a
    /// `Data` in a global is reported leaked by LeakSanitizer, which cannot follow its storage.
    static let releaseScript = """
        if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end
        """
}

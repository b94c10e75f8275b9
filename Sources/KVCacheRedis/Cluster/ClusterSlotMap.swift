import Foundation
import KVCache

/// Which node serves each of a Redis Cluster's 16,384 slots, read from `CLUSTER SLOTS`.
struct ClusterSlotMap: Sendable {
    /// The primaries, indexed by `owners`.
    private(set) var primaries: [RedisAddress] = []
    /// Every replica named, for the subscriber to fall back on.
    private(set) var replicas: [RedisAddress] = []
    /// The index in `primaries` of each slot's node, or `unowned`.
    private var owners = [UInt16](repeating: ClusterSlotMap.unowned, count: ClusterKeySlot.count)
    private static let unowned = UInt16.max

    /// The node serving `slot`, or nil if no node does.
    func primary(forSlot slot: Int) -> RedisAddress? {
        let owner = owners[slot]
        return owner == Self.unowned ? nil : primaries[Int(owner)]
    }

    /// Records that `address` serves `slot` (a `MOVED` redirect said so).
    mutating func assign(_ slot: Int, to address: RedisAddress) {
        owners[slot] = index(of: address)
    }

    private mutating func index(of address: RedisAddress) -> UInt16 {
        if let found = primaries.firstIndex(of: address) { return UInt16(found) }
        primaries.append(address)
        return UInt16(primaries.count - 1)
    }

    /// The map in a `CLUSTER SLOTS` reply from the node at `answering`; nodes get its
    /// password. Throws `.unexpectedReply` for anything else, or a map without a slot.
    init(slotsReply reply: RedisReply, answering: RedisAddress) throws {
        guard case .array(let ranges) = reply else {
            throw RemoteLevelError(.unexpectedReply, "CLUSTER SLOTS answered \(reply)")
        }
        func node(_ reply: RedisReply) -> RedisAddress? {
            guard case .array(let parts) = reply, parts.count >= 2, let hostBytes = parts[0].data,
                  case .integer(let port) = parts[1], (1...65_535).contains(port) else { return nil }
            let host = String(decoding: hostBytes, as: UTF8.self)
            if host == "?" { return nil }  // an endpoint the node does not know
            // An empty host is the answering node's own.
            return RedisAddress(host: host.isEmpty ? answering.host : host, port: Int(port),
                                password: answering.password)
        }
        var covered = 0
        for range in ranges {
            guard case .array(let parts) = range, parts.count >= 3, case .integer(let first) = parts[0],
                  case .integer(let last) = parts[1], 0 <= first, first <= last, last < ClusterKeySlot.count else {
                throw RemoteLevelError(.unexpectedReply, "CLUSTER SLOTS answered a malformed range: \(range)")
            }
            guard let primary = node(parts[2]) else { continue }
            let owner = index(of: primary)
            for slot in Int(first)...Int(last) { owners[slot] = owner }
            covered += Int(last - first + 1)
            for replica in parts.dropFirst(3).compactMap(node) where !replicas.contains(replica) {
                replicas.append(replica)
            }
        }
        guard covered > 0 else { throw RemoteLevelError(.unexpectedReply, "CLUSTER SLOTS named no slot") }
    }
}

/// A `MOVED` or `ASK` error reply: the slot is served, for good or for this command only,
/// by another node.
struct ClusterRedirect: Equatable {
    var slot: Int
    var address: RedisAddress
    /// True for `ASK` (the slot is migrating: ask the target once, after `ASKING`).
    var isAsk: Bool

    init(slot: Int, address: RedisAddress, isAsk: Bool) {
        self.slot = slot
        self.address = address
        self.isAsk = isAsk
    }

    /// Parses `MOVED <slot> <host>:<port>` or `ASK <slot> <host>:<port>` (an empty host is
    /// `current`'s), or nil for any other reply.
    init?(_ reply: RedisReply, from current: RedisAddress) {
        guard case .error(let message) = reply else { return nil }
        let parts = message.split(separator: " ")
        guard parts.count == 3, parts[0] == "MOVED" || parts[0] == "ASK", let slot = Int(parts[1]),
              (0..<ClusterKeySlot.count).contains(slot), let colon = parts[2].lastIndex(of: ":"),
              let port = Int(parts[2][parts[2].index(after: colon)...]), (1...65_535).contains(port) else { return nil }
        let host = String(parts[2][..<colon])
        self.slot = slot
        address = RedisAddress(host: host.isEmpty ? current.host : host, port: port, password: current.password)
        isAsk = parts[0] == "ASK"
    }
}

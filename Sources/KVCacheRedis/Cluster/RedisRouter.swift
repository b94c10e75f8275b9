import Foundation
import KVCache

/// Sends each command where its key lives: to the one server, or in a Redis Cluster to the
/// node serving the key's slot, following `MOVED` and `ASK` redirects and reading the slot
/// map again (`CLUSTER SLOTS`) when a node moved its slots or could not be reached.
final class RedisRouter: Sendable {
    /// The server, or the cluster nodes first asked for the slot map.
    let seeds: [RedisAddress]
    let isCluster: Bool
    private let makePool: @Sendable (RedisAddress) -> RedisConnectionPool
    /// One per node ever used (a cluster has few); never removed, so their counts stay.
    private let pools: MutexBox<[RedisAddress: RedisConnectionPool]>
    /// The one server's pool, outside the map: a call needs no lock or hash to find it.
    private let serverPool: RedisConnectionPool?
    private let slotMap = MutexBox<ClusterSlotMap?>(nil)
    private let refreshState = MutexBox(RefreshState())
    /// The least time between two readings of the slot map after failures or redirects.
    let minimumRefreshInterval: Double
    /// A chain of redirects longer than this is an error (a cluster reconfiguring in a loop).
    static let maxRedirects = 5

    private struct RefreshState {
        var isRefreshing = false
        var last = -Double.infinity
        var count = 0
    }

    init(seeds: [RedisAddress], isCluster: Bool, minimumRefreshInterval: Double = 0.1,
         makePool: @escaping @Sendable (RedisAddress) -> RedisConnectionPool) {
        precondition(!seeds.isEmpty)
        self.seeds = seeds
        self.isCluster = isCluster
        self.makePool = makePool
        self.minimumRefreshInterval = minimumRefreshInterval
        serverPool = isCluster ? nil : makePool(seeds[0])
        pools = MutexBox(serverPool.map { [seeds[0]: $0] } ?? [:])
    }

    func pool(for address: RedisAddress) -> RedisConnectionPool {
        pools.withLock { pools in
            if let pool = pools[address] { return pool }
            let pool = makePool(address)
            pools[address] = pool
            return pool
        }
    }

    var allPools: [RedisConnectionPool] { pools.withLock { Array($0.values) } }

    /// Times the slot map was read.
    var slotMapReadings: Int { refreshState.withLock { $0.count } }

    // MARK: - Commands

    /// Runs `commands` in one round trip on the node that serves `key` (a redirect or a
    /// node that failed over costs more). Error replies other than redirects are returned.
    func run(key: Data, _ commands: [[Data]], decodingValues: Bool = false) throws -> [RedisReply] {
        try run(key: key, decodingValues: decodingValues) { _ in commands }
    }

    /// `run(key:_:)` with the commands made for the connection that sends them (which may
    /// lend them its scratch memory), once per node tried.
    func run(key: Data, decodingValues: Bool = false,
             _ makeCommands: (RedisConnection) -> [[Data]]) throws -> [RedisReply] {
        if let serverPool {
            return try serverPool.withConnection { try $0.pipeline(makeCommands($0), decodingValues: decodingValues) }
        }
        let slot = ClusterKeySlot.slot(of: key)
        var target = try primary(forSlot: slot)
        var asking = false
        var refreshedAfterFailure = false
        for _ in 0...Self.maxRedirects {
            let replies: [RedisReply]
            do {
                replies = try pool(for: target).withConnection { connection in
                    let commands = makeCommands(connection)
                    let sent = asking ? commands.flatMap { [[Data("ASKING".utf8)], $0] } : commands
                    return try connection.pipeline(sent, decodingValues: decodingValues)
                }
            } catch let error as RemoteLevelError where error.code == .unavailable || error.code == .circuitOpen {
                // The node may be down for good, its slots taken over by a replica: ask once.
                guard !refreshedAfterFailure else { throw error }
                refreshedAfterFailure = true
                refreshSlotMap(force: false)
                guard let next = slotMap.withLock({ $0?.primary(forSlot: slot) }), next != target else { throw error }
                target = next
                asking = false
                continue
            }
            let answers = asking ? stride(from: 1, to: replies.count, by: 2).map { replies[$0] } : replies
            guard let redirect = answers.lazy.compactMap({ ClusterRedirect($0, from: target) }).first else {
                return answers
            }
            if !redirect.isAsk {
                slotMap.withLock { $0?.assign(redirect.slot, to: redirect.address) }
                // Slots seldom move alone (a failover, a resharding): read the whole map.
                refreshSlotMap(force: false)
            }
            target = redirect.address
            asking = redirect.isAsk
        }
        throw RemoteLevelError(.unexpectedReply, "more than \(Self.maxRedirects) redirects for slot \(slot)")
    }

    /// Runs `commands` (no keys, say a `PUBLISH`) on any reachable node.
    func runOnAnyNode(_ commands: [[Data]]) throws -> [RedisReply] {
        guard isCluster else { return try run(key: Data(), commands) }
        var lastError: Error = RemoteLevelError(.unavailable, "no cluster node answered")
        for address in try candidates() {
            do {
                return try pool(for: address).withConnection { try $0.pipeline(commands) }
            } catch let error as RemoteLevelError where error.code == .unavailable || error.code == .circuitOpen {
                lastError = error
            }
        }
        throw lastError
    }

    /// One reply per key to `GET` (a `.value`, another bulk string, null, or an error reply for keys whose
    /// node failed): one `MGET` on one server; in a cluster one round trip per node, one
    /// `MGET` per slot. Throws only if no key could be read.
    func getMany(_ keys: [Data]) throws -> [RedisReply] {
        guard isCluster else {
            let reply = try run(key: Data(), [[Data("MGET".utf8)] + keys], decodingValues: true)[0]
            guard case .array(let values) = reply, values.count == keys.count else {
                if case .error = reply { return Array(repeating: reply, count: keys.count) }
                throw RemoteLevelError(.unexpectedReply, "MGET answered \(reply)")
            }
            return values
        }
        var bySlot: [Int: [Int]] = [:]
        for (index, key) in keys.enumerated() { bySlot[ClusterKeySlot.slot(of: key), default: []].append(index) }
        var byNode: [RedisAddress: [[Int]]] = [:]
        for (slot, indices) in bySlot { byNode[try primary(forSlot: slot), default: []].append(indices) }
        var results = [RedisReply?](repeating: nil, count: keys.count)
        var failures = 0
        var lastError: Error?
        for (address, groups) in byNode {
            let commands = groups.map { [Data("MGET".utf8)] + $0.map { keys[$0] } }
            do {
                let replies = try pool(for: address).withConnection { try $0.pipeline(commands, decodingValues: true) }
                for (indices, reply) in zip(groups, replies) {
                    if case .array(let values) = reply, values.count == indices.count {
                        for (index, value) in zip(indices, values) { results[index] = value }
                    }
                    // A redirect or other error for this slot: each key on its own, routed.
                }
            } catch {
                failures += 1
                lastError = error
            }
        }
        if failures == byNode.count, let lastError { throw lastError }
        for index in results.indices where results[index] == nil {
            do {
                results[index] = try run(key: keys[index], [[Data("GET".utf8), keys[index]]], decodingValues: true)[0]
            } catch {
                results[index] = .error("\(error)")
            }
        }
        return results.map { $0! }
    }

    /// Calls `body` with each node that holds keys: the server, or every cluster primary.
    func forEachPrimary(_ body: (RedisAddress, RedisConnectionPool) throws -> Void) throws {
        if let serverPool { return try body(seeds[0], serverPool) }
        if slotMap.withLock({ $0 == nil }) { refreshSlotMap(force: true) }
        guard let primaries = slotMap.withLock({ $0?.primaries }) else {
            throw RemoteLevelError(.unavailable, "no cluster node answered CLUSTER SLOTS")
        }
        for address in primaries { try body(address, pool(for: address)) }
    }

    /// Where a subscriber may subscribe: the server, or any cluster node (a message
    /// published on one reaches every node).
    func subscriptionCandidates() -> [RedisAddress] {
        guard isCluster else { return seeds }
        let map = slotMap.withLock { $0 }
        var candidates: [RedisAddress] = []
        for address in (map?.primaries ?? []) + seeds + (map?.replicas ?? []) where !candidates.contains(address) {
            candidates.append(address)
        }
        return candidates
    }

    // MARK: - Slot map

    /// The node the level sends `slot`'s keys to now (nil before the map is read).
    func knownPrimary(forSlot slot: Int) -> RedisAddress? {
        slotMap.withLock { $0?.primary(forSlot: slot) }
    }

    private func primary(forSlot slot: Int) throws -> RedisAddress {
        if let address = slotMap.withLock({ $0?.primary(forSlot: slot) }) { return address }
        refreshSlotMap(force: true)
        if let address = slotMap.withLock({ $0?.primary(forSlot: slot) }) { return address }
        throw RemoteLevelError(.unavailable, "no cluster node serves slot \(slot)")
    }

    /// The nodes to ask, reachable ones first: the map's primaries, the seeds, the replicas.
    private func candidates() throws -> [RedisAddress] {
        let all = subscriptionCandidates()
        let open = Set(all.filter { pool(for: $0).breaker.isOpen })
        return all.filter { !open.contains($0) } + all.filter { open.contains($0) }
    }

    /// Reads the slot map from the first node that answers. Without `force` (a caller that
    /// has a map), it skips while another reading runs or sooner than `minimumRefreshInterval`
    /// after the last.
    func refreshSlotMap(force: Bool) {
        let now = Condition.now()
        let begins = refreshState.withLock { state -> Bool in
            if !force && (state.isRefreshing || now - state.last < minimumRefreshInterval) { return false }
            state.isRefreshing = true
            return true
        }
        guard begins else { return }
        var found: ClusterSlotMap?
        for address in (try? candidates()) ?? seeds {
            if let reply = try? pool(for: address).withConnection({ try $0.command([Data("CLUSTER".utf8), Data("SLOTS".utf8)]) }),
               let map = try? ClusterSlotMap(slotsReply: reply, answering: address) {
                found = map
                break
            }
        }
        if let found { slotMap.withLock { $0 = found } }
        refreshState.withLock { state in
            state.isRefreshing = false
            state.last = Condition.now()
            state.count += 1
        }
    }
}

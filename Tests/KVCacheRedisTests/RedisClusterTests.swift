import Foundation
import Testing
@testable import KVCache
@testable import KVCacheRedis

/// The slot of a key, without a server.
@Suite struct ClusterKeySlotTests {
    @Test func slotsMatchRedisCluster() {
        // Redis Cluster's specification: CRC16("123456789") is 0x31C3; known slots of keys.
        #expect(Array("123456789".utf8).withUnsafeBufferPointer(ClusterKeySlot.crc16) == 0x31C3)
        #expect(ClusterKeySlot.slot(of: Data("foo".utf8)) == 12_182)
        #expect(ClusterKeySlot.slot(of: Data("bar".utf8)) == 5_061)
        #expect(ClusterKeySlot.slot(of: Data()) == 0)
    }

    @Test func onlyANonEmptyHashTagIsHashed() {
        let tagged = ClusterKeySlot.slot(of: Data("user1000".utf8))
        #expect(ClusterKeySlot.slot(of: Data("{user1000}.following".utf8)) == tagged)
        #expect(ClusterKeySlot.slot(of: Data("x{user1000}{other}".utf8)) == tagged)
        // `{}` is not a tag: the whole key is hashed.
        let wholeKey = Array("{}user1000".utf8).withUnsafeBufferPointer(ClusterKeySlot.crc16)
        #expect(ClusterKeySlot.slot(of: Data("{}user1000".utf8)) == Int(wholeKey & 0x3FFF))
        #expect(ClusterKeySlot.slot(of: Data("{}user1000".utf8)) != ClusterKeySlot.slot(of: Data("user1000".utf8)))
        #expect(ClusterKeySlot.slot(of: Data("{user1000".utf8)) != tagged)
    }

    @Test func redirectsParse() throws {
        let current = RedisAddress(host: "10.0.0.1", port: 7000, password: "p")
        #expect(ClusterRedirect(.error("MOVED 3999 127.0.0.1:6381"), from: current)
                == ClusterRedirect(slot: 3999, address: RedisAddress(host: "127.0.0.1", port: 6381, password: "p"), isAsk: false))
        #expect(ClusterRedirect(.error("ASK 1 :6381"), from: current)
                == ClusterRedirect(slot: 1, address: RedisAddress(host: "10.0.0.1", port: 6381, password: "p"), isAsk: true))
        for bad in ["MOVED", "MOVED x 1:2", "MOVED 16384 h:1", "MOVED 1 h:0", "MOVED 1 h", "ERR 1 h:1", "WRONGTYPE x"] {
            #expect(ClusterRedirect(.error(bad), from: current) == nil, "\(bad)")
        }
        #expect(ClusterRedirect(.string(Data("MOVED 1 h:1".utf8)), from: current) == nil)
    }

    @Test func aClusterConfigurationIsChecked() {
        #expect(throws: RemoteLevelError.self) { try RedisLevel(configuration: .init(cluster: [], namespace: "n")) }
        #expect(throws: RemoteLevelError.self) {
            try RedisLevel(configuration: .init(cluster: [RedisAddress(host: "h", database: 1)], namespace: "n"))
        }
        #expect(throws: RemoteLevelError.self) {
            try RedisLevel(configuration: .init(cluster: [RedisAddress(host: "h"), RedisAddress(host: "")], namespace: "n"))
        }
        var notCluster = RedisLevel.Configuration(address: RedisAddress(host: "h"), namespace: "n")
        notCluster.moreClusterNodes = [RedisAddress(host: "g")]
        #expect(throws: RemoteLevelError.self) { try RedisLevel(configuration: notCluster) }
        #expect(throws: Never.self) {
            try RedisLevel(configuration: .init(cluster: [RedisAddress(host: "h"), RedisAddress(host: "g")], namespace: "n"))
        }
    }
}

/// Against the three-master cluster `.ci/run` starts (`KVCACHE_REDIS_CLUSTER`).
@Suite(.enabled(if: RedisTestCluster.nodesText != nil, RedisTestCluster.skipReason))
struct RedisClusterTests {
    @Test func slotsAgreeWithTheServers() throws {
        let raw = try RedisTestServer.raw(try RedisTestCluster.nodes[0])
        for index in 0..<300 {
            let key = switch index % 5 {
            case 0: "{tag\(index % 7)}k\(index)"
            case 1: "{}k\(index)"  // an empty tag: the whole key
            case 2: "{k\(index)"  // no closing brace: the whole key
            default: "kvcache:ns:\(UUID().uuidString)\(index)"
            }
            #expect(try raw.run("CLUSTER", "KEYSLOT", key) == .integer(Int64(ClusterKeySlot.slot(of: Data(key.utf8)))))
        }
    }

    @Test func keysGoToTheNodeServingTheirSlotAndReadBack() throws {
        let nodes = try RedisTestCluster.nodes
        let level = try RedisTestCluster.level(namespace: RedisTestServer.uniqueNamespace())
        let keys = (0..<60).map { "key-\($0)" }
        for (index, key) in keys.enumerated() {
            try level.setEntry(RemoteEntry(data: bytes(100, seed: UInt8(index)), expiration: .never), forKey: key)
        }
        // Each key is on one node only, the one its slot says; they spread over all three.
        let raw = try RedisTestCluster.rawNodes(nodes)
        var holders = Set<RedisAddress>()
        for key in keys {
            let redisKey = level.redisKey(key)
            let found = try nodes.filter { try raw[$0]!.command([Data("EXISTS".utf8), redisKey]) == .integer(1) }
            #expect(found.count == 1)
            holders.formUnion(found)
        }
        #expect(holders.count == nodes.count)
        for (index, key) in keys.enumerated() {
            #expect(try level.entry(forKey: key)?.data == bytes(100, seed: UInt8(index)))
        }
        let before = level.statistics.roundTrips
        let batch = try level.entries(forKeys: keys + ["missing"])
        #expect(batch.count == keys.count)
        #expect(level.statistics.roundTrips - before == nodes.count, "one round trip per node")
        #expect(batch["key-7"]?.data == bytes(100, seed: 7))
        #expect(level.statistics.failures == 0)
    }

    @Test func groupedKeysShareOneSlotSoABatchIsOneMGET() throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let level = try RedisTestCluster.level(namespace: namespace) { $0.groupsKeys = true }
        let keys = (0..<100).map { "k\($0)" }
        for key in keys { try level.setEntry(RemoteEntry(data: Data(key.utf8), expiration: .never), forKey: key) }
        #expect(Set(keys.map { ClusterKeySlot.slot(of: level.redisKey($0)) }).count == 1)
        let before = level.statistics
        let batch = try level.entries(forKeys: keys)
        #expect(batch.count == 100 && batch["k42"]?.data == Data("k42".utf8))
        #expect(level.statistics.calls == before.calls + 1)
        #expect(level.statistics.roundTrips == before.roundTrips + 1)
    }

    @Test func aPrefixIsRemovedOnEveryNode() throws {
        let level = try RedisTestCluster.level(namespace: RedisTestServer.uniqueNamespace())
        for index in 0..<40 {
            try level.setEntry(RemoteEntry(data: bytes(10), expiration: .never), forKey: "gone/\(index)")
            try level.setEntry(RemoteEntry(data: bytes(10), expiration: .never), forKey: "kept/\(index)")
        }
        try level.removeEntries(withPrefix: "gone/")
        let found = try level.entries(forKeys: (0..<40).flatMap { ["gone/\($0)", "kept/\($0)"] })
        #expect(found.count == 40 && found.keys.allSatisfy { $0.hasPrefix("kept/") })
    }

    @Test func aChangeOnOneNodeInvalidatesAnotherNodesCopy() throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let a = try Node(level: RedisTestCluster.level(namespace: namespace))
        let b = try Node(level: RedisTestCluster.level(namespace: namespace))
        try a.cache.setValue(bytes(10), forKey: "k")
        #expect(b.waitForChanges(1))
        #expect(try b.cache.result(forKey: "k").source == .remote)
        #expect(b.cache.memory.contains("k"))
        try a.cache.setValue(bytes(11), forKey: "k")
        #expect(b.waitForChanges(2))
        #expect(!b.cache.memory.contains("k"))
        #expect(try b.cache.value(forKey: "k") == bytes(11))
    }

    @Test func leasesLiveOnTheNodeOfTheirKey() throws {
        let namespace = RedisTestServer.uniqueNamespace()
        let a = try RedisTestCluster.level(namespace: namespace)
        let b = try RedisTestCluster.level(namespace: namespace)
        for key in (0..<12).map({ "k\($0)" }) {
            let lease = try #require(try a.acquireLease(forKey: key, duration: .seconds(10)))
            #expect(try b.acquireLease(forKey: key, duration: .seconds(10)) == nil)
            try a.releaseLease(lease)
            let next = try #require(try b.acquireLease(forKey: key, duration: .seconds(10)))
            try b.releaseLease(next)
        }
        #expect(a.statistics.failures == 0 && b.statistics.failures == 0)
    }

    /// A slot moved while the level held the old map: writes during the migration follow
    /// `ASK`, reads afterwards follow `MOVED`, and the map is read again.
    @Test func migratingAndMovedSlotsAreFollowed() async throws {
        // Off the test runner's threads: it blocks on outside processes for seconds.
        try await onOwnThread {
            let nodes = try RedisTestCluster.nodes
            let namespace = RedisTestServer.uniqueNamespace()
            let level = try RedisTestCluster.level(namespace: namespace) { $0.groupsKeys = true }
            try level.setEntry(RemoteEntry(data: bytes(10), expiration: .never), forKey: "old")
            let slot = ClusterKeySlot.slot(of: level.redisKey("old"))
            let raw = try RedisTestCluster.rawNodes(nodes)
            let map = try ClusterSlotMap(slotsReply: raw[nodes[0]]!.run("CLUSTER", "SLOTS"), answering: nodes[0])
            let source = try #require(map.primary(forSlot: slot))
            let target = try #require(map.primaries.first { $0 != source })
            func id(_ node: RedisAddress) throws -> String {
                String(decoding: try #require(raw[node]!.run("CLUSTER", "MYID").data), as: UTF8.self)
            }
            let (sourceID, targetID) = (try id(source), try id(target))
            try #require(raw[target]!.run("CLUSTER", "SETSLOT", "\(slot)", "IMPORTING", sourceID) == .status("OK"))
            try #require(raw[source]!.run("CLUSTER", "SETSLOT", "\(slot)", "MIGRATING", targetID) == .status("OK"))

            // A key the source does not have goes to the target (ASK), and is read there.
            try level.setEntry(RemoteEntry(data: bytes(20), expiration: .never), forKey: "new")
            #expect(try raw[target]!.pipeline([[Data("ASKING".utf8)], [Data("EXISTS".utf8), level.redisKey("new")]])[1]
                    == .integer(1))
            #expect(try level.entry(forKey: "new")?.data == bytes(20))
            #expect(try level.entry(forKey: "old")?.data == bytes(10))

            // Move the rest, and give the slot to the target everywhere.
            let keys = try raw[source]!.run("CLUSTER", "GETKEYSINSLOT", "\(slot)", "1000")
            if case .array(let names) = keys, !names.isEmpty {
                let migrate = [Data("MIGRATE".utf8), Data(target.host.utf8), Data("\(target.port)".utf8), Data(),
                               Data("0".utf8), Data("5000".utf8), Data("KEYS".utf8)] + names.compactMap(\.data)
                #expect(try raw[source]!.command(migrate) == .status("OK"))
            }
            for node in nodes { _ = try raw[node]!.run("CLUSTER", "SETSLOT", "\(slot)", "NODE", targetID) }

            #expect(level.router.knownPrimary(forSlot: slot) == source)
            #expect(try level.entry(forKey: "old")?.data == bytes(10))
            #expect(level.router.knownPrimary(forSlot: slot) == target)
            #expect(try level.entry(forKey: "new")?.data == bytes(20))
            #expect(level.statistics.failures == 0)
        }
    }
}

/// A cluster of the test's own, whose master is killed.
@Suite(.enabled(if: RedisTestCluster.canStartClusters, RedisTestCluster.skipReason))
struct RedisClusterFailoverTests {
    /// kill -9 the master the other node's subscriber is on: its replica takes over; the
    /// level reads the new map and finds the values (replicated before the kill); the
    /// subscriber moves to another node, resynchronizes, and hears later changes.
    @Test func whenAMasterFailsItsReplicaServesTheKeys() async throws {
        // Off the test runner's threads: it blocks on outside processes for seconds.
        try await onOwnThread {
            let cluster = try OwnRedisCluster()
            let namespace = "failover"
            let level = try RedisTestCluster.level(namespace: namespace, nodes: cluster.addresses) {
                $0.breakDuration = .milliseconds(10)
            }
            let other = try Node(level: RedisTestCluster.level(namespace: namespace, nodes: cluster.addresses))
            let keys = (0..<30).map { "k\($0)" }
            for key in keys { try level.setEntry(RemoteEntry(data: Data(key.utf8), expiration: .never), forKey: key) }
            try waitUntil(timeout: 10, "the replicas did not catch up") { try replicasCaughtUp(cluster) }

            // The victim: the master the other node's subscriber is on (the first seed).
            let channel = "kvcache:\(namespace):changes"
            let victim = try #require(try cluster.servers.first { server in
                try cluster.role(of: server) == "master"
                    && RedisTestServer.raw(server.address).run("PUBSUB", "NUMSUB", channel) == .array([.string(Data(channel.utf8)), .integer(1)])
            })
            let victimAddress = victim.address
            let victimKey = try #require(keys.first {
                try cluster.master(ofSlot: ClusterKeySlot.slot(of: level.redisKey($0)), askingAnyOf: cluster.servers) == victimAddress
            })
            let victimSlot = ClusterKeySlot.slot(of: level.redisKey(victimKey))
            victim.kill9()
            let survivors = cluster.servers.filter { $0 !== victim }
            // Calls to the dead master fail, counted, never thrown past the level's error.
            #expect(throws: RemoteLevelError.self) { try level.entry(forKey: victimKey) }
            try waitUntil(timeout: 30, "no replica took over") {
                guard let owner = try cluster.master(ofSlot: victimSlot, askingAnyOf: survivors) else { return false }
                return try owner != victimAddress && survivors.allSatisfy(cluster.isUp)
            }
            for key in keys { #expect(try level.entry(forKey: key)?.data == Data(key.utf8)) }
            #expect(level.statistics.failures >= 1)

            // The backplane too: the subscriber lost its node, subscribed on another (dropping
            // the local values), and hears a change made after the failover.
            #expect(other.level.waitForStatistics(timeout: .seconds(10)) { $0.subscriptions >= 2 })
            #expect(other.cache.statistics.remoteResynchronizations >= 2)
            let received = other.level.statistics.changesReceived
            try level.setEntry(RemoteEntry(data: Data("new".utf8), expiration: .never), forKey: victimKey)
            #expect(other.level.waitForStatistics(timeout: .seconds(10)) { $0.changesReceived > received })
        }
    }

    private func replicasCaughtUp(_ cluster: OwnRedisCluster) throws -> Bool {
        try cluster.servers.allSatisfy { server in
            guard try cluster.role(of: server) == "master" else { return true }
            let info = String(decoding: try RedisTestServer.raw(server.address).run("INFO", "replication").data ?? Data(),
                              as: UTF8.self)
            guard let offset = info.value(of: "master_repl_offset") else { return false }
            // Each replica line: slave0:ip=...,port=...,state=online,offset=N,lag=0
            let replicas = info.split(separator: "\r\n").filter { $0.hasPrefix("slave") && $0.contains("state=") }
            return !replicas.isEmpty && replicas.allSatisfy { $0.contains("state=online") && $0.contains("offset=\(offset),") }
        }
    }
}

private extension String {
    /// The value of `name:value` on a line of an INFO reply.
    func value(of name: String) -> String? {
        split(separator: "\r\n").first { $0.hasPrefix(name + ":") }.map { String($0.dropFirst(name.count + 1)) }
    }
}

import Foundation
import KVCache
import KVCacheRedis
#if canImport(Glibc)
import Glibc
#endif

/// `kvcache-bench remote` (issue 16): the Redis level against raw hiredis round trips on
/// the same server, measured in the same run. Suites "remote" (get and set by size, a
/// batch of 100 gets and its round trips, remote against local hits through `Cache`,
/// invalidation latency from one process to another) and "remote-down" (local hits and
/// sets while the server is up, stopped with SIGSTOP, and killed; only on a server of
/// its own).
struct RemoteBenchmark {
    var options: CommonOptions
    var workspace: Workspace
    var report: Report
    /// `--redis`; nil: a redis-server of the run's own.
    var redisURL: String?
    /// Gets and sets per run and strategy at 1 KB (a quarter at 100 KB).
    var operations: Int
    /// Batches of 100 gets per run and strategy.
    var batches: Int
    /// Invalidations per run and kind.
    var invalidations: Int

    static let floor = "raw hiredis"
    static let level = "RedisLevel"
    static let rawSetPublish = "raw hiredis SET+PUBLISH"
    static let rawGets = "raw hiredis, 100 GETs"
    static let cacheWithLevel = "Cache with RedisLevel"
    static let up = "Redis up", stopped = "Redis stopped (SIGSTOP)", killed = "Redis killed"
    static let batchGroup = "batch of 100 × 1 KB"
    static let hitsGroup = "Cache<Data>, 1 KB"
    static let invalidationGroup = "one process to another"

    var runs: Int { options.runCount }

    /// Narrowing for profiling one figure (not needed for a normal run), from the environment:
    /// `KVCACHE_BENCH_REMOTE_PARTS=get,set,batch,hits,invalidation,down` (default all) and
    /// `KVCACHE_BENCH_REMOTE_SIZES=1,100` (KB, for get and set).
    var parts: Set<String> = ["get", "set", "batch", "hits", "invalidation", "down"]
    var sizes = [1, 100]

    init(options: CommonOptions, workspace: Workspace, report: Report, redisURL: String?,
         operations: Int?, batches: Int?, invalidations: Int?) {
        self.options = options
        self.workspace = workspace
        self.report = report
        self.redisURL = redisURL
        self.operations = max(4, operations ?? (options.quick ? 200 : 2_000))
        self.batches = max(1, batches ?? (options.quick ? 10 : 100))
        self.invalidations = max(1, invalidations ?? (options.quick ? 20 : 400))
        let environment = ProcessInfo.processInfo.environment
        func list(_ name: String) -> [String]? {
            environment[name].map { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
        }
        if let parts = list("KVCACHE_BENCH_REMOTE_PARTS") { self.parts = Set(parts) }
        if let sizes = list("KVCACHE_BENCH_REMOTE_SIZES") { self.sizes = sizes.compactMap { Int($0) } }
    }

    /// What the suite talks to: the address, a raw connection, and the names in use.
    struct Server {
        var address: RedisAddress
        var url: String
        var raw: RawRedis
        /// Unique to this run, so a shared server's other keys are never touched.
        var namespace: String

        /// A `RedisLevel` on this server; `suffix` picks a namespace of its own.
        func level(_ suffix: String = "") throws -> RedisLevel {
            try RedisLevel(configuration: .init(address: address, namespace: namespace + suffix))
        }

        /// The key a `RedisLevel` of namespace `namespace + suffix` stores `key` under
        /// (`kvcache:<namespace>:<key>`, as RedisLevel documents).
        func redisKey(_ key: String, _ suffix: String = "") -> Data {
            Data("kvcache:\(namespace + suffix):\(key)".utf8)
        }
    }

    func run() throws {
        Output.print("## Remote level\n")
        let own: OwnRedisServer? = redisURL == nil ? try OwnRedisServer(directory: workspace.makeDirectory("redis-server")) : nil
        let address = try own?.address ?? RedisAddress(redisURL!)
        let raw = try RawRedis(address: address)
        let version = OwnRedisServer.field("redis_version", in: (try? raw.command(["INFO", "server"]))?.text ?? "") ?? "?"
        let server = Server(address: address, url: own?.url ?? redisURL!, raw: raw,
                            namespace: "kvcache-bench-\(getpid())-\(UInt16.random(in: 0 ... .max))")
        report.note("remote: redis-server \(version) on \(address)" + (own == nil
            ? " (--redis; the server-down rows need a server of the run's own and are skipped)"
            : " (started by this run: --save '' --appendonly no; killed at the end)")
            + "; the floor \"raw hiredis\" is hiredis's redisCommandArgv on one connection, replies copied into Data")
        defer { cleanUp(server) }

        if !parts.isDisjoint(with: ["get", "set"]) {
            for size in sizes {
                try getAndSet(server, size: size * 1_024, label: "\(size) KB",
                              count: size > 10 ? max(4, operations / 4) : operations)
            }
        }
        if parts.contains("batch") { try batch(server) }
        if parts.contains("hits") { try cacheHits(server) }
        if parts.contains("invalidation") { try invalidation(server) }
        if parts.contains("down") {
            if let own {
                try serverDown(server, own)
            } else {
                report.note("remote: the server-down rows skipped: they stop and kill the server, so they run "
                    + "only on a redis-server of the run's own (without --redis)")
            }
        }
    }

    /// Removes this run's keys from a server the run did not start.
    private func cleanUp(_ server: Server) {
        guard redisURL != nil else { return }
        for suffix in ["", "-hits", "-inv-level", "-inv-cache", "-raw"] {
            try? server.level(suffix).removeEntries(withPrefix: "")
        }
    }

    // MARK: Timing

    /// Runs `body` for 0..<count, timing each call (one clock read per call).
    private func lapped(_ count: Int, _ body: (Int) throws -> Void) rethrows -> (total: UInt64, laps: [UInt64]) {
        var timer = LapTimer(capacity: count)
        for index in 0..<count {
            try body(index)
            timer.lap()
        }
        return (timer.elapsed(), timer.latencies)
    }

    /// Runs `prepare` (untimed) then `body` (timed, clock cost subtracted) for 0..<count.
    private func timedEach(_ count: Int, prepare: (Int) throws -> Void = { _ in },
                           _ body: (Int) throws -> Void) rethrows -> (total: UInt64, laps: [UInt64]) {
        var laps: [UInt64] = []
        laps.reserveCapacity(count)
        var total: UInt64 = 0
        for index in 0..<count {
            try prepare(index)
            let start = Clock.now()
            try body(index)
            let elapsed = Clock.now() - start
            let lap = elapsed > Clock.overhead ? elapsed - Clock.overhead : 0
            laps.append(lap)
            total += lap
        }
        return (total, laps)
    }

    private static func bytes(_ count: Int, seed: UInt64) -> Data {
        var random = SplitMix64(seed: seed)
        return Data((0..<count).map { _ in UInt8(truncatingIfNeeded: random.next()) })
    }

    // MARK: Get and set

    private func getAndSet(_ server: Server, size: Int, label: String, count: Int) throws {
        let level = try server.level()
        let keyCount = min(count, size > 10_000 ? 100 : 1_000)
        let keys = (0..<keyCount).map { "v\(size)-\($0)" }
        let redisKeys = keys.map { server.redisKey($0) }
        let rawKeys = keys.map { server.redisKey($0, "-raw") }
        let value = Self.bytes(size, seed: UInt64(size))
        let entry = RemoteEntry(data: value, expiration: .never)
        for key in keys { try level.setEntry(entry, forKey: key) }
        // The level's value with its header, as the raw floor reads it: the same bytes on the wire.
        guard let stored = try server.raw.get(redisKeys[0]), stored.count > size else {
            throw RawRedis.Failure(description: "the raw GET of \(String(decoding: redisKeys[0], as: UTF8.self)) "
                + "found no value: RedisLevel's key format is not kvcache:<namespace>:<key>")
        }
        // What setEntry sends besides the SET: a PUBLISH of about the same bytes.
        let channel = Data("kvcache:\(server.namespace):changes".utf8)
        let message = Data("0123456789abcdef k \(keys[0])".utf8)
        // Warm-up (untimed): the level's first call connects.
        for index in 0..<min(50, count) {
            _ = try level.entry(forKey: keys[index % keyCount])
            _ = try server.raw.get(redisKeys[index % keyCount])
        }

        var gets = SampleSet(), sets = SampleSet()
        var misses = 0
        for run in 0..<runs {
            Progress.log("remote: \(label) get and set, \(count) ops, run \(run + 1)/\(runs)")
            let getters = parts.contains("get") ? [Self.floor, Self.level] : []
            for name in run.isMultiple(of: 2) ? getters : getters.reversed() {
                let time = try lapped(count) { index in
                    if name == Self.floor {
                        if try server.raw.get(redisKeys[index % keyCount]) == nil { misses += 1 }
                    } else if try level.entry(forKey: keys[index % keyCount]) == nil {
                        misses += 1
                    }
                }
                gets.record(name, isFloor: name == Self.floor, nanoseconds: time.total, operations: count,
                            latencies: time.laps)
            }
            let setters = parts.contains("set") ? [Self.floor, Self.rawSetPublish, Self.level] : []
            for name in run.isMultiple(of: 2) ? setters : setters.reversed() {
                let time = try lapped(count) { index in
                    switch name {
                    case Self.floor: try server.raw.set(rawKeys[index % keyCount], stored)
                    case Self.rawSetPublish:
                        try server.raw.setAndPublish(rawKeys[index % keyCount], stored, channel: channel, message: message)
                    default: try level.setEntry(entry, forKey: keys[index % keyCount])
                    }
                }
                sets.record(name, isFloor: name == Self.floor, nanoseconds: time.total, operations: count,
                            latencies: time.laps)
            }
        }
        if misses != 0 { Progress.log("warning: \(misses) remote gets of \(label) missed stored keys") }

        var get = Comparison(suite: "remote", group: label, workload: "get", operationsPerRun: count)
        get.valueSize = size
        gets.fill(&get)
        get.notes.append("raw hiredis: GET of the level's own keys (the value and its 14-byte header), reply copied "
            + "into Data; RedisLevel: entry(forKey:) (pool, breaker, GET, reply copy, header decode); "
            + "\(keyCount) keys in turn")
        if !get.rows.isEmpty { report.add(get) }

        var set = Comparison(suite: "remote", group: label, workload: "set", operationsPerRun: count)
        set.valueSize = size
        sets.fill(&set)
        set.notes.append("raw hiredis: SET of the same bytes; raw hiredis SET+PUBLISH: the SET and a "
            + "PUBLISH of an invalidation in one write, what setEntry sends; RedisLevel: setEntry (never expires)")
        if let level = set.rows.first(where: { $0.strategy == Self.level })?.nanosecondsPerOperation.median,
           let pipelined = set.rows.first(where: { $0.strategy == Self.rawSetPublish })?.nanosecondsPerOperation.median,
           pipelined > 0 {
            set.notes.append(String(format: "RedisLevel ÷ raw hiredis SET+PUBLISH: %.2f", level / pipelined))
        }
        if !set.rows.isEmpty { report.add(set) }
    }

    // MARK: Batch

    private func batch(_ server: Server) throws {
        let level = try server.level()
        let keys = (0..<100).map { "b\($0)" }
        let redisKeys = keys.map { server.redisKey($0) }
        let value = Self.bytes(1_024, seed: 100)
        for key in keys { try level.setEntry(RemoteEntry(data: value, expiration: .never), forKey: key) }
        _ = try level.entries(forKeys: keys)

        var times = SampleSet(), trips = SampleSet()
        var short = 0
        for run in 0..<runs {
            Progress.log("remote: batches of 100 gets, \(batches) batches, run \(run + 1)/\(runs)")
            let strategies = [Self.floor, Self.level, Self.rawGets]
            for name in run.isMultiple(of: 2) ? strategies : strategies.reversed() {
                let commandsBefore = try server.raw.commandCalls()
                let roundTripsBefore = level.statistics.roundTrips
                let time = try lapped(batches) { _ in
                    switch name {
                    case Self.floor:
                        if try server.raw.mget(redisKeys).contains(where: { $0 == nil }) { short += 1 }
                    case Self.rawGets:
                        for key in redisKeys where try server.raw.get(key) == nil { short += 1 }
                    default:
                        if try level.entries(forKeys: keys).count != keys.count { short += 1 }
                    }
                }
                let commandsAfter = try server.raw.commandCalls()
                times.record(name, isFloor: name == Self.floor, nanoseconds: time.total, operations: batches,
                             latencies: time.laps)
                // Round trips: the level counts its own (one per call); the raw strategies make one
                // per command, counted by the server.
                let roundTrips: Double
                if name == Self.level {
                    roundTrips = Double(level.statistics.roundTrips - roundTripsBefore) / Double(batches)
                } else {
                    let commands = ["get", "mget"].reduce(0) { $0 + (commandsAfter[$1] ?? 0) - (commandsBefore[$1] ?? 0) }
                    roundTrips = Double(commands) / Double(batches)
                }
                trips.record(name, isFloor: name == Self.floor, perOperation: roundTrips, operations: batches)
                if name == Self.level {
                    let mgets = (commandsAfter["mget"] ?? 0) - (commandsBefore["mget"] ?? 0)
                    let getsSent = (commandsAfter["get"] ?? 0) - (commandsBefore["get"] ?? 0)
                    if mgets != batches || getsSent != 0 {
                        Progress.log("note: during RedisLevel's \(batches) batches the server counted \(mgets) MGET "
                            + "and \(getsSent) GET (another client on the server?)")
                    }
                }
            }
        }
        if short != 0 { Progress.log("warning: \(short) batches found fewer than 100 values") }

        var comparison = Comparison(suite: "remote", group: Self.batchGroup, workload: "get", operationsPerRun: batches)
        comparison.valueSize = 1_024
        times.fill(&comparison)
        comparison.notes.append("figures per batch of 100 keys; raw hiredis: one MGET; RedisLevel: entries(forKeys:); "
            + "raw hiredis, 100 GETs: one round trip each")
        report.add(comparison)

        var roundTrips = Comparison(suite: "remote", group: Self.batchGroup, workload: "round trips per batch",
                                    operationsPerRun: batches)
        roundTrips.unit = "round trips"
        trips.fill(&roundTrips)
        roundTrips.notes.append("RedisLevel: its statistics.roundTrips per batch (one write and its replies); "
            + "raw: GET and MGET calls the server counted (INFO commandstats) per batch")
        if let figure = roundTrips.rows.first(where: { $0.strategy == Self.level })?.nanosecondsPerOperation.median {
            roundTrips.notes.append(figure == 1 ? "RedisLevel: 1 round trip per batch of 100"
                : String(format: "RedisLevel: %.2f round trips per batch of 100", figure))
        }
        report.add(roundTrips)
    }

    // MARK: Remote hit against local hits

    private func cacheHits(_ server: Server) throws {
        let directory = try workspace.makeDirectory("remote-hits")
        defer { workspace.remove(directory) }
        var configuration = KVCache.Cache<Data>.Configuration()
        configuration.disk.autoTrimInterval = nil
        configuration.remote = try server.level("-hits")
        let cache = try KVCache.Cache<Data>(directory: directory, configuration: configuration)
        defer { try? cache.close() }
        let keyCount = min(operations, 1_000)
        let keys = (0..<keyCount).map { "h\($0)" }
        let redisKeys = keys.map { server.redisKey($0, "-hits") }
        let value = Self.bytes(1_024, seed: 7)
        for key in keys { try cache.setValue(value, forKey: key) }
        try cache.flush()
        let memoryHit = "Cache memory hit", diskHit = "Cache disk hit", remoteHit = "Cache remote hit"
        // Warm-up: the level's connection, the disk's read connection.
        for key in keys.prefix(50) {
            cache.memory.removeValue(forKey: key)
            try cache.disk.removeValue(forKey: key)
            _ = try cache.value(forKey: key)
            _ = try server.raw.get(redisKeys[0])
        }

        var set = SampleSet()
        var wrongLevel = 0
        for run in 0..<runs {
            Progress.log("remote: Cache hits by level, \(operations) ops, run \(run + 1)/\(runs)")
            let strategies = [Self.floor, memoryHit, diskHit, remoteHit]
            for name in run.isMultiple(of: 2) ? strategies : strategies.reversed() {
                let before = cache.statistics
                let time: (total: UInt64, laps: [UInt64])
                switch name {
                case Self.floor:
                    time = try timedEach(operations) { index in _ = try server.raw.get(redisKeys[index % keyCount]) }
                case memoryHit:
                    time = try timedEach(operations) { index in _ = try cache.value(forKey: keys[index % keyCount]) }
                case diskHit:
                    time = try timedEach(operations, prepare: { _ = cache.memory.removeValue(forKey: keys[$0 % keyCount]) }) {
                        index in _ = try cache.value(forKey: keys[index % keyCount])
                    }
                default:
                    // Only Redis holds it: the disk removal drops the memory copy too.
                    time = try timedEach(operations, prepare: { index in
                        _ = cache.memory.removeValue(forKey: keys[index % keyCount])
                        try cache.disk.removeValue(forKey: keys[index % keyCount])
                    }) { index in _ = try cache.value(forKey: keys[index % keyCount]) }
                }
                let after = cache.statistics
                let expected: Int = switch name {
                case memoryHit: after.memoryHits - before.memoryHits
                case diskHit: after.diskHits - before.diskHits
                case remoteHit: after.remoteHits - before.remoteHits
                default: operations
                }
                if expected != operations { wrongLevel += operations - expected }
                set.record(name, isFloor: name == Self.floor, nanoseconds: time.total, operations: operations,
                           latencies: time.laps)
            }
        }
        if wrongLevel != 0 { Progress.log("warning: \(wrongLevel) Cache reads were not answered by the level timed") }

        var comparison = Comparison(suite: "remote", group: Self.hitsGroup, workload: "get hit by level",
                                    operationsPerRun: operations)
        comparison.valueSize = 1_024
        set.fill(&comparison)
        comparison.notes.append("each read timed alone (clock cost subtracted); before each disk hit the key is "
            + "removed from memory, before each remote hit from memory and disk (untimed); a remote hit stores "
            + "the value on disk and in memory")
        let median = { (name: String) in comparison.rows.first { $0.strategy == name }?.nanosecondsPerOperation.median }
        if let remote = median(remoteHit), let memory = median(memoryHit), let disk = median(diskHit),
           memory > 0, disk > 0 {
            comparison.notes.append(String(format: "remote hit ÷ memory hit: %.0f×; remote hit ÷ disk hit: %.1f×",
                                           remote / memory, remote / disk))
        }
        report.add(comparison)
    }

    // MARK: Invalidation between processes

    private func invalidation(_ server: Server) throws {
        let total = invalidations * runs
        let peerDirectory = try workspace.makeDirectory("remote-peer")
        defer { workspace.remove(peerDirectory) }
        let directory = try workspace.makeDirectory("remote-invalidation")
        defer { workspace.remove(directory) }
        let namespace = server.namespace + "-inv"
        Progress.log("remote: starting the peer process (\(total) cached keys)")
        let peer = try ChildProcess(ChildProcess.ownExecutable(), [
            "remote-peer", "--redis", server.url, "--namespace", namespace, "--keys", "\(total)",
            "--directory", peerDirectory.path,
        ], pipes: true)
        defer { peer.kill() }
        guard let output = peer.output, output.nextLine(timeout: 120) == "ready" else {
            throw ChildProcess.Failure(description: "the remote-peer process did not get ready")
        }

        let level = try server.level("-inv-level")
        var configuration = KVCache.Cache<Data>.Configuration()
        configuration.disk.autoTrimInterval = nil
        configuration.remote = try server.level("-inv-cache")
        let cache = try KVCache.Cache<Data>(directory: directory, configuration: configuration)
        defer { try? cache.close() }
        let channel = Data(RemotePeer.rawChannel(namespace).utf8)
        let value = Self.bytes(1_024, seed: 11)
        let entry = RemoteEntry(data: value, expiration: .never)
        let kinds: [(name: String, tag: String)] = [(Self.floor, "raw"), (Self.level, "level"), (Self.cacheWithLevel, "cache")]

        var set = SampleSet()
        var lost = 0
        var index = 0
        for run in 0..<runs {
            Progress.log("remote: invalidations to another process, \(invalidations) each, run \(run + 1)/\(runs)")
            var latencies: [String: [UInt64]] = [:]
            for _ in 0..<invalidations {
                for kind in run.isMultiple(of: 2) ? kinds : kinds.reversed() {
                    let key: String
                    let start = Clock.now()
                    switch kind.tag {
                    case "raw":
                        key = "\(index)"
                        try server.raw.publish(channel, Data(key.utf8))
                    case "level":
                        key = "l\(index)"
                        try level.setEntry(entry, forKey: key)
                    default:
                        key = "c\(index)"
                        try cache.setValue(value, forKey: key)
                    }
                    // The peer's line for this message (nothing else is in flight).
                    let prefix = "\(kind.tag) \(key) "
                    var arrival: UInt64?
                    while let line = output.nextLine(timeout: 2) {
                        if line.hasPrefix(prefix) {
                            arrival = UInt64(line.dropFirst(prefix.count))
                            break
                        }
                    }
                    guard let arrival else {
                        lost += 1
                        continue
                    }
                    latencies[kind.name, default: []].append(arrival > start ? arrival - start : 0)
                }
                index += 1
            }
            for kind in kinds {
                let values = latencies[kind.name] ?? []
                guard !values.isEmpty else { continue }
                // The run's median latency as its figure; the percentiles pool every message.
                let median = values.sorted()[values.count / 2]
                set.record(kind.name, isFloor: kind.name == Self.floor, perOperation: Double(median),
                           operations: values.count, latencies: values)
            }
        }
        peer.closeInput()
        if peer.wait(timeout: 10) != 0 { Progress.log("warning: the remote-peer process did not exit cleanly") }

        var comparison = Comparison(suite: "remote", group: Self.invalidationGroup, workload: "invalidation",
                                    operationsPerRun: invalidations)
        set.fill(&comparison)
        comparison.notes.append("from just before the call in this process to the other process's handler "
            + "(CLOCK_MONOTONIC, one clock for both); one message in flight at a time. raw hiredis: PUBLISH → "
            + "a SUBSCRIBEd hiredis connection; RedisLevel: setEntry → another RedisLevel's subscribe handler; "
            + "Cache with RedisLevel: setValue (memory, disk, then Redis) → the other process's Cache has dropped its memory "
            + "and disk copies. Medians are each run's median latency")
        if lost > 0 { comparison.notes.append("\(lost) messages did not arrive within 2 s") }
        report.add(comparison)
    }

    // MARK: Local hits while the server is down

    /// Memory hits, disk hits and sets through a `Cache<Data>` with a `RedisLevel`, with the
    /// run's own server up, stopped (SIGSTOP) and killed. Hits never call the server, so the
    /// states can alternate in short slices (SIGSTOP and SIGCONT; SIGKILL and a restart) and
    /// each state's hits share the same seconds of a shared machine; sets call it, so each
    /// state's sets are one block per run, followed by the wait for the breaker to close.
    private func serverDown(_ server: Server, _ own: OwnRedisServer) throws {
        // An empty server to start from: the earlier rows' 100 MB are not freed during a slice.
        try own.restart()
        let directory = try workspace.makeDirectory("remote-down")
        defer { workspace.remove(directory) }
        var configuration = KVCache.Cache<Data>.Configuration()
        configuration.disk.autoTrimInterval = nil
        // Otherwise as configured by default; but the default .localValues drops the local
        // values each time the subscription comes back after a restart, and these rows time
        // local hits, so the values are kept (what the cache does meanwhile is the same).
        configuration.remoteResynchronization = .nothing
        let level = try server.level("-down")
        configuration.remote = level
        let cache = try KVCache.Cache<Data>(directory: directory, configuration: configuration)
        defer { try? cache.close() }
        let keyCount = min(operations, 1_000)
        let keys = (0..<keyCount).map { "d\($0)" }
        let value = Self.bytes(1_024, seed: 13)
        for key in keys { try cache.setValue(value, forKey: key) }
        try cache.flush()
        let slices = 10
        let memorySlice = max(1, operations * 25 / slices), diskSlice = max(1, operations * 5 / slices)
        let sets = max(1, operations / 4)
        let states = [Self.up, Self.stopped, Self.killed]

        var memory = SampleSet(), disk = SampleSet(), writes = SampleSet()
        // Each run's p99, for the targets: the median of runs, as every other figure (a pooled
        // p99 is the noisiest run's).
        var memoryP99 = SampleSet(), diskP99 = SampleSet()
        var missed = 0
        var restarts: [Double] = []
        /// Runs `body` with the server in `state`, and brings it back up afterwards.
        func with(_ state: String, _ body: () throws -> Void) throws {
            // Every state starts 50 ms after its switch: for tens of ms after a signal, a kill
            // or a restart (2 shared cores), disk-hit p99 rose to 2-3× in any state that
            // came next, and the slices after a kill or SIGSTOP were the ones measured then.
            switch state {
            case Self.stopped:
                own.pause()
                defer { own.resume() }
                usleep(50_000)
                try body()
            case Self.killed:
                own.kill()
                usleep(50_000)
                try body()
                let start = Clock.now()
                try own.restart()
                restarts.append(Double(Clock.now() - start) / 1e9)
                // The new server's start-up (it answers PING before it is done) must not overlap
                // the next slice, whichever state that is.
                usleep(50_000)
            default:
                usleep(50_000)
                try body()
            }
        }
        /// Until a call of the level succeeds (the breaker lets one probe breakDuration
        /// after the last failure): the seconds it took.
        func waitUntilAnswering() -> Double {
            let start = Clock.now()
            while Clock.now() - start < 20_000_000_000 {
                do {
                    _ = try level.entry(forKey: "probe")
                    return Double(Clock.now() - start) / 1e9
                } catch {
                    usleep(20_000)
                }
            }
            Progress.log("warning: the level did not answer within 20 s")
            return 20
        }
        var recovery: [Double] = []
        // The disk level's background work after the sets above (its WAL checkpoint,
        // presumably) given time to end: in a first version, a state measured right after
        // sets had 2-3 times the disk-hit p99 of one measured after a pause.
        usleep(500_000)
        for run in 0..<runs {
            Progress.log("remote: local hits with Redis up, stopped and killed in turn, run \(run + 1)/\(runs)")
            for key in keys.prefix(500) {
                _ = cache.memory.removeValue(forKey: key)
                _ = try cache.value(forKey: key)
            }
            var memoryLaps: [String: [UInt64]] = [:], diskLaps: [String: [UInt64]] = [:]
            var memoryTotal: [String: UInt64] = [:], diskTotal: [String: UInt64] = [:]
            for slice in 0..<slices {
                let order = (run * slices + slice).isMultiple(of: 2) ? states : states.reversed()
                for state in order {
                    try with(state) {
                        // Untimed, in every state: the switch itself (a signal, for a kill a wait
                        // for the child) may have moved this thread off its core; its first
                        // reads after that are not what the state costs. Both paths are warmed.
                        for index in 0..<1_000 { _ = try cache.value(forKey: keys[index % keyCount]) }
                        for index in 0..<200 {
                            _ = cache.memory.removeValue(forKey: keys[(keyCount - 1 - index % keyCount)])
                            _ = try cache.value(forKey: keys[(keyCount - 1 - index % keyCount)])
                        }
                        let before = cache.statistics
                        let memoryTime = try timedEach(memorySlice) { index in
                            _ = try cache.value(forKey: keys[(slice * memorySlice + index) % keyCount])
                        }
                        let middle = cache.statistics
                        let diskTime = try timedEach(diskSlice, prepare: {
                            _ = cache.memory.removeValue(forKey: keys[(slice * diskSlice + $0) % keyCount])
                        }) { index in _ = try cache.value(forKey: keys[(slice * diskSlice + index) % keyCount]) }
                        let after = cache.statistics
                        missed += memorySlice - (middle.memoryHits - before.memoryHits)
                            + diskSlice - (after.diskHits - middle.diskHits)
                        memoryLaps[state, default: []] += memoryTime.laps
                        memoryTotal[state, default: 0] += memoryTime.total
                        diskLaps[state, default: []] += diskTime.laps
                        diskTotal[state, default: 0] += diskTime.total
                    }
                }
            }
            for state in states {
                let isFloor = state == Self.up
                let memoryRun = memoryLaps[state] ?? [], diskRun = diskLaps[state] ?? []
                memory.record(state, isFloor: isFloor, nanoseconds: memoryTotal[state] ?? 0,
                              operations: memoryRun.count, latencies: memoryRun)
                disk.record(state, isFloor: isFloor, nanoseconds: diskTotal[state] ?? 0,
                            operations: diskRun.count, latencies: diskRun)
                let memoryTail = Latency(memoryRun)?.p99 ?? 0, diskTail = Latency(diskRun)?.p99 ?? 0
                memoryP99.record(state, isFloor: isFloor, perOperation: memoryTail, operations: memoryRun.count)
                diskP99.record(state, isFloor: isFloor, perOperation: diskTail, operations: diskRun.count)
                Progress.log(String(format: "remote: %@: memory hit p99 %.0f ns, disk hit p99 %.0f ns", state,
                                    memoryTail, diskTail))
            }
        }
        // The restarts left the pooled connection stale: its first call fails and opens the
        // breaker. Sets start with the level answering.
        _ = waitUntilAnswering()
        for run in 0..<runs {
            Progress.log("remote: sets with Redis up, stopped and killed, run \(run + 1)/\(runs)")
            // Each state's block, then the wait until the level answers again.
            for state in run.isMultiple(of: 2) ? states : states.reversed() {
                try with(state) {
                    let time = try timedEach(sets) { index in try cache.setValue(value, forKey: "s\(index % keyCount)") }
                    writes.record(state, isFloor: state == Self.up, nanoseconds: time.total, operations: sets,
                                  latencies: time.laps)
                }
                if state != Self.up { recovery.append(waitUntilAnswering()) }
                try cache.flush()
            }
        }
        if missed > 0 { Progress.log("warning: \(missed) local reads were not the hits timed") }
        let statistics = cache.statistics

        let common = "Cache<Data> with a RedisLevel (defaults but remoteResynchronization .nothing: the values "
            + "stay across restarts); the run's own server stopped with SIGSTOP (connections hang) or killed "
            + "(refused), then resumed or restarted"
        for (workload, samples) in [("memory hit", memory), ("disk hit", disk)] {
            var comparison = Comparison(suite: "remote-down", group: Self.hitsGroup, workload: workload,
                                        operationsPerRun: (workload == "memory hit" ? memorySlice : diskSlice) * slices)
            comparison.valueSize = 1_024
            samples.fill(&comparison)
            comparison.notes.append(common + "; the three states alternate in \(slices) slices per run; each "
                + "read timed alone, clock cost subtracted")
            report.add(comparison)
        }
        var setComparison = Comparison(suite: "remote-down", group: Self.hitsGroup, workload: "set 1 KB",
                                       operationsPerRun: sets)
        setComparison.valueSize = 1_024
        writes.fill(&setComparison)
        setComparison.notes.append(common + "; each state's sets one block per run, after the runs of hits")
        setComparison.notes.append(String(
            format: "remote writes are .immediate: with the server stopped the first set waits the 250 ms "
                + "command timeout, the others fail fast for 2 s (breaker); killed, the connection is refused at "
                + "once; the level answered again %.1f–%.1f s after SIGCONT or a restart; a restart took "
                + "%.0f–%.0f ms; remote errors counted: %d", recovery.min() ?? 0, recovery.max() ?? 0,
            1e3 * (restarts.min() ?? 0), 1e3 * (restarts.max() ?? 0), statistics.remoteErrors))
        report.add(setComparison)
        for (workload, samples, count) in [("memory hit p99 per run", memoryP99, memorySlice * slices),
                                           ("disk hit p99 per run", diskP99, diskSlice * slices)] {
            var comparison = Comparison(suite: "remote-down", group: Self.hitsGroup, workload: workload,
                                        operationsPerRun: 1)
            comparison.valueSize = 1_024
            samples.fill(&comparison)
            comparison.notes.append("each run's p99 of \(count) single reads (ns); median, min and max over the runs")
            report.add(comparison)
        }
    }
}

import Foundation
import KVCache
import KVCacheRedis
import KVCacheTestSupport
#if canImport(Glibc)
import Glibc
#endif

// How stale a node's reads are after another node's acknowledged write, with both busy
// (issue 38 (4)); figures in docs/RELIABILITY.md.
//
//   KVCacheRedisTestWorker staleness <redis url> [writes (20000)] [keys (64)]
//
// starts a reader process and a writer process (this executable again), each with a cache of
// its own in front of the Redis at <redis url>. The writer sets k0…k<keys-1> round robin,
// back to back, each value its version (1, 2, …), and after each acknowledged set publishes
// the key's version and the time of the acknowledgement in a file both map (one 64-bit word
// per key, CLOCK_MONOTONIC, which the processes share). The reader reads the keys round
// robin, back to back; a read that returns a version older than the one acknowledged before
// the read began is stale. It also records when each invalidation reached its subscriber
// and when it had been applied. The parent prints, over all writes, how long after its
// acknowledgement a read still returned an older version (0 for writes never read stale),
// and where the time went: the invalidation's delivery, its handling, or neither (a stale
// read that began after the invalidation was applied: a race, which should not happen).

enum Staleness {
    static func microseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }

    /// Words in a file both processes map: [0] reader ready, [1] the writer's count of sets once
    /// it is done, then per key
    /// `version << 40 | microseconds since base` of its last acknowledged set.
    struct Shared {
        let words: UnsafeMutablePointer<UInt64>

        init(path: String, keys: Int, create: Bool) throws {
            let fd = open(path, create ? O_RDWR | O_CREAT | O_TRUNC : O_RDWR, 0o600)
            guard fd >= 0 else { throw KVCacheError.invalidArgument("cannot open \(path)") }
            defer { close(fd) }
            let size = (2 + keys) * 8
            if create { ftruncate(fd, off_t(size)) }
            guard let memory = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), memory != MAP_FAILED else {
                throw KVCacheError.invalidArgument("cannot map \(path)")
            }
            words = memory.bindMemory(to: UInt64.self, capacity: 2 + keys)
        }

        // Aligned 64-bit loads and stores, one instruction each: never torn.
        func load(_ index: Int) -> UInt64 { (words + index).pointee }
        func store(_ index: Int, _ value: UInt64) { (words + index).pointee = value }
    }

    static func level(url: String, namespace: String) throws -> RedisLevel {
        var configuration = RedisLevel.Configuration(address: try RedisAddress(url), namespace: namespace)
        // A busy machine must not turn a slow moment into a failed call (a failure is no staleness).
        configuration.connectTimeout = .seconds(5)
        configuration.commandTimeout = .seconds(5)
        return try RedisLevel(configuration: configuration)
    }

    static func cache(directory: String, remote: any RemoteLevel) throws -> Cache<Data> {
        var configuration = Cache<Data>.Configuration()
        configuration.disk.autoTrimInterval = nil
        configuration.remote = remote
        // KVCACHE_STALENESS_POLICY=lru: the memory level's exact LRU instead of the adaptive policy.
        if ProcessInfo.processInfo.environment["KVCACHE_STALENESS_POLICY"] == "lru" { configuration.memory.policy = .lru }
        return try Cache(directory: URL(fileURLWithPath: directory), coder: DataCoder(), configuration: configuration)
    }

    static func version(_ data: Data?) -> UInt64 {
        data.flatMap { UInt64(String(decoding: $0, as: UTF8.self)) } ?? 0
    }

    // MARK: - The parent

    static func run(_ arguments: [String]) -> Int32 {
        guard arguments.count >= 1, let writes = Int(arguments.count > 1 ? arguments[1] : "20000"),
              let keys = Int(arguments.count > 2 ? arguments[2] : "64"), writes > 0, keys > 0 else {
            print("usage: KVCacheRedisTestWorker staleness <redis url> [writes] [keys]")
            return 2
        }
        let url = arguments[0]
        do {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kvcache-staleness-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: directory) }
            let namespace = "staleness-\(UInt32.random(in: 0 ... .max))"
            let sharedPath = directory + "/shared"
            let shared = try Shared(path: sharedPath, keys: keys, create: true)
            let base = microseconds()
            let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
            let reader = try WorkerProcessSupport.spawn(executable, arguments: [
                "staleness-reader", directory + "/reader", url, namespace, sharedPath, "\(keys)", "\(base)",
                directory + "/reader.out"], redirections: [])
            // Until the reader's cache is open and subscribed (a tool, not a test: polling is fine).
            while shared.load(0) == 0 { usleep(1_000) }
            let writer = try WorkerProcessSupport.spawn(executable, arguments: [
                "staleness-writer", directory + "/writer", url, namespace, sharedPath, "\(keys)", "\(base)",
                directory + "/writer.out", "\(writes)"], redirections: [])
            let writerStatus = WorkerProcessSupport.waitForExit(of: writer)
            let readerStatus = WorkerProcessSupport.waitForExit(of: reader)
            guard writerStatus == 0, readerStatus == 0 else {
                print("error: writer exited \(writerStatus), reader \(readerStatus)")
                return 1
            }
            report(writerOutput: try String(contentsOfFile: directory + "/writer.out", encoding: .utf8),
                   readerOutput: try String(contentsOfFile: directory + "/reader.out", encoding: .utf8), keys: keys)
            return 0
        } catch {
            print("error: \(error)")
            return 1
        }
    }

    static func report(writerOutput: String, readerOutput: String, keys: Int) {
        // acks[key][version - 1] = acknowledgement time.
        var acks = Array(repeating: [UInt64](), count: keys)
        var busyWriter = ""
        for line in writerOutput.split(separator: "\n") {
            let words = line.split(separator: " ")
            if words.first == "a", words.count == 4, let key = Int(words[1]), let time = UInt64(words[3]) {
                acks[key].append(time)
            } else if words.first == "w" {
                busyWriter = String(line)
            }
        }
        var received = Array(repeating: [UInt64](), count: keys)
        var applied = Array(repeating: [UInt64](), count: keys)
        var stale: [(key: Int, version: Int, acknowledged: Int, start: UInt64, source: String)] = []
        var readerLine = ""
        var lookups = Array(repeating: [(version: Int, start: UInt64, end: UInt64, source: String)](), count: keys)
        var explained = Set<[Int]>()
        for line in readerOutput.split(separator: "\n") {
            let words = line.split(separator: " ")
            switch words.first {
            case "c":
                if let key = Int(words[1]), let at = UInt64(words[2]), let done = UInt64(words[3]) {
                    received[key].append(at)
                    applied[key].append(done)
                }
            case "s":
                if let key = Int(words[1]), let version = Int(words[2]), let acknowledged = Int(words[3]),
                   let start = UInt64(words[4]) {
                    stale.append((key, version, acknowledged, start, String(words[5])))
                }
            case "n":
                if let key = Int(words[1]), let version = Int(words[2]), let start = UInt64(words[3]), let end = UInt64(words[4]) {
                    lookups[key].append((version, start, end, String(words[5])))
                }
            case "r":
                readerLine = String(line)
            default:
                break
            }
        }
        let writes = acks.map(\.count).reduce(0, +)
        // Per write, how long after its acknowledgement a read still returned an older version.
        var staleness = acks.map { Array(repeating: UInt64(0), count: $0.count) }
        var raced = 0
        var bySource: [String: Int] = [:]
        for event in stale {
            bySource[event.source, default: 0] += 1
            // The first write the read missed, and whether its invalidation was applied before the read.
            if event.version < applied[event.key].count, applied[event.key][event.version] <= event.start {
                raced += 1
                if ProcessInfo.processInfo.environment["KVCACHE_STALENESS_DETAIL"] != nil,
                   explained.insert([event.key, event.version]).inserted, explained.count <= 6 {
                    for lookup in lookups[event.key].filter({ $0.start < event.start }).suffix(3) {
                        print("  before it, key \(event.key): a \(lookup.source) read \(lookup.start)-\(lookup.end) returned \(lookup.version)")
                    }
                    let versions = max(0, event.version - 2)..<min(applied[event.key].count, event.version + 2)
                    print("  invalidations of key \(event.key): " + versions.map { "v\($0 + 1) received \(received[event.key][$0]) applied \(applied[event.key][$0]) acked \(acks[event.key][$0])" }.joined(separator: "; "))
                    print("race: key \(event.key) returned \(event.version) (acknowledged \(event.acknowledged)) from \(event.source), "
                          + "the read began \(event.start - applied[event.key][event.version]) µs after the invalidation of \(event.version + 1) was applied "
                          + "(received \(received[event.key][event.version]), acked \(acks[event.key][event.version]), start \(event.start))")
                }
            }
            for version in (event.version + 1)...max(event.version + 1, event.acknowledged) where version <= acks[event.key].count {
                let ack = acks[event.key][version - 1]
                if event.start >= ack {
                    staleness[event.key][version - 1] = max(staleness[event.key][version - 1], event.start - ack)
                }
            }
        }
        let all = staleness.flatMap { $0 }.sorted()
        let staleWrites = all.filter { $0 > 0 }.count
        var delivery: [Int64] = []
        var handling: [Int64] = []
        for key in 0..<keys {
            for (index, ack) in acks[key].enumerated() where index < received[key].count {
                delivery.append(Int64(received[key][index]) - Int64(ack))
                handling.append(Int64(applied[key][index]) - Int64(received[key][index]))
            }
        }
        delivery.sort()
        handling.sort()
        func ms<T: BinaryInteger>(_ values: [T], _ quantile: Double) -> String {
            guard !values.isEmpty else { return "-" }
            let index = min(values.count - 1, Int((Double(values.count) * quantile).rounded(.up)) - 1)
            return String(format: "%.2f", Double(values[max(0, index)]) / 1_000)
        }
        print("writes \(writes) over \(keys) keys; \(readerLine.dropFirst(2)); \(busyWriter.dropFirst(2))")
        print("writes read stale at least once after their ack: \(staleWrites) (\(String(format: "%.2f", Double(staleWrites) * 100 / Double(max(1, writes))))%)")
        print("staleness after the ack, ms, over all writes: p50 \(ms(all, 0.5)) p99 \(ms(all, 0.99)) p99.9 \(ms(all, 0.999)) max \(ms(all, 1))")
        print("stale reads: \(stale.count) (by source: \(bySource.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))); "
              + "begun after the invalidation was applied (a race): \(raced)")
        print("invalidation delivered after the ack, ms: p50 \(ms(delivery, 0.5)) p99 \(ms(delivery, 0.99)) max \(ms(delivery, 1)) "
              + "(\(delivery.count) of \(writes) matched)")
        print("invalidation handled (local copies dropped), ms: p50 \(ms(handling, 0.5)) p99 \(ms(handling, 0.99)) max \(ms(handling, 1))")
    }

    // MARK: - The children

    /// Forwards to a `RedisLevel`, timing each invalidation's arrival and handling.
    final class TimedLevel: RemoteLevel, @unchecked Sendable {
        let base: RedisLevel
        let times = MutexBox<[(key: Int, received: UInt64, applied: UInt64)]>([])
        let origin: UInt64

        init(_ base: RedisLevel, origin: UInt64) {
            self.base = base
            self.origin = origin
        }

        func entry(forKey key: String) throws -> RemoteEntry? { try base.entry(forKey: key) }
        func entries(forKeys keys: [String]) throws -> [String: RemoteEntry] { try base.entries(forKeys: keys) }
        func setEntry(_ entry: RemoteEntry, forKey key: String) throws { try base.setEntry(entry, forKey: key) }
        func removeEntry(forKey key: String) throws { try base.removeEntry(forKey: key) }
        func removeEntries(withPrefix prefix: String) throws { try base.removeEntries(withPrefix: prefix) }
        func stopSubscription() { base.stopSubscription() }
        func subscribe(_ handler: @escaping @Sendable (RemoteChange) -> Void) throws {
            try base.subscribe { [times, origin] change in
                let received = Staleness.microseconds() - origin
                handler(change)
                if case .key(let key) = change, let index = Int(key.dropFirst()) {
                    let applied = Staleness.microseconds() - origin
                    times.withLock { $0.append((index, received, applied)) }
                }
            }
        }
    }

    static func reader(_ arguments: [String]) -> Int32 {
        // <directory> <url> <namespace> <shared> <keys> <base> <output>
        guard arguments.count == 7, let keys = Int(arguments[4]), let base = UInt64(arguments[5]) else { return 2 }
        do {
            let shared = try Shared(path: arguments[3], keys: keys, create: false)
            let level = TimedLevel(try level(url: arguments[1], namespace: arguments[2]), origin: base)
            let cache = try cache(directory: arguments[0], remote: level)
            let names = (0..<keys).map { "k\($0)" }
            var output = ""
            var reads = 0
            var sources: [ValueSource: Int] = [:]
            let detail = ProcessInfo.processInfo.environment["KVCACHE_STALENESS_DETAIL"] != nil
            shared.store(0, 1)
            let started = microseconds()
            var key = 0
            // Until the writer is done and every invalidation was applied (5 s at most), so the
            // staleness of the last writes is seen too.
            var doneAt: UInt64?
            var iteration = 0
            while true {
                iteration &+= 1
                if iteration & 1023 == 0, case let done = shared.load(1), done > 0 {
                    let now = microseconds()
                    if doneAt == nil { doneAt = now }
                    if level.times.withLock({ $0.count }) >= Int(done) || now - doneAt! > 5_000_000 { break }
                }
                let acknowledged = shared.load(2 + key) >> 40
                let start = microseconds() - base
                let result = try cache.result(forKey: names[key])
                reads += 1
                sources[result.source, default: 0] += 1
                let version = version(result.value)
                if version < acknowledged {
                    output += "s \(key) \(version) \(acknowledged) \(start) \(result.source)\n"
                }
                if detail, result.source != .memory {
                    output += "n \(key) \(version) \(start) \(microseconds() - base) \(result.source)\n"
                }
                key = key + 1 == keys ? 0 : key + 1
            }
            let seconds = Double(microseconds() - started) / 1e6
            try cache.close()
            for time in level.times.withLock({ $0 }) { output += "c \(time.key) \(time.received) \(time.applied)\n" }
            output += "r reader: \(reads) reads in \(String(format: "%.1f", seconds)) s ("
                + sources.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.key) \($0.value)" }.joined(separator: ", ") + ")\n"
            try output.write(toFile: arguments[6], atomically: true, encoding: .utf8)
            return 0
        } catch {
            print("reader error: \(error)")
            return 1
        }
    }

    static func writer(_ arguments: [String]) -> Int32 {
        // <directory> <url> <namespace> <shared> <keys> <base> <output> <writes>
        guard arguments.count == 8, let keys = Int(arguments[4]), let base = UInt64(arguments[5]),
              let writes = Int(arguments[7]) else { return 2 }
        do {
            let shared = try Shared(path: arguments[3], keys: keys, create: false)
            let level = try level(url: arguments[1], namespace: arguments[2])
            let cache = try cache(directory: arguments[0], remote: level)
            var output = ""
            output.reserveCapacity(writes * 24)
            let started = microseconds()
            for write in 0..<writes {
                let key = write % keys
                let version = UInt64(write / keys + 1)
                try cache.setValue(Data(String(version).utf8), forKey: "k\(key)")
                let acknowledged = microseconds() - base
                shared.store(2 + key, version << 40 | acknowledged)
                output += "a \(key) \(version) \(acknowledged)\n"
            }
            let seconds = Double(microseconds() - started) / 1e6
            shared.store(1, UInt64(writes))
            output += "w writer: \(writes) sets in \(String(format: "%.1f", seconds)) s, \(cache.statistics.remoteErrors) remote errors\n"
            try cache.close()
            try output.write(toFile: arguments[6], atomically: true, encoding: .utf8)
            return 0
        } catch {
            print("writer error: \(error)")
            return 1
        }
    }
}

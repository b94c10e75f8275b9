import Dispatch
import Foundation
import KVCache
import KVCacheTestSupport

/// One of several processes racing `setValueIfAbsent` on the same keys, through a
/// `DiskCache` (`disk`) or a `Cache` with a memory and a disk level (`cache`): each of
/// `threads` threads offers its own value (`AddRace.value`) for every key, in the same order.
///
/// Protocol: `ready` once the cache is open; then it waits for a line `go` on stdin, so that
/// the processes start together. After the race, `W <key index> <thread>` for each key a
/// thread of this process stored, then `D <keys won>`. Then it checks what it reads back
/// (through the level raced through, and on the disk level): a key this process won holds
/// its value; any other key holds another process's value; through the facade, the memory
/// level holds this process's value for each key it won and nothing for the others. Each
/// failed check or error prints `E <message>` (the first few) and makes the exit status 4.
struct AddRacer {
    let directory: URL
    let process: Int
    let threads: Int
    let keys: Int
    let throughFacade: Bool

    func run() -> Never {
        let level = open()
        WorkerOutput.line("ready")
        guard readLine() == "go" else { Output.fail("expected go") }
        let winners = Winners(keys: keys)
        let group = DispatchGroup()
        for thread in 0..<threads {
            group.enter()
            Thread {
                for index in 0..<keys {
                    let value = AddRace.value(forKey: index, process: process, thread: thread)
                    do {
                        if try level.add(value, AddRace.key(index)) { winners.record(index, thread: thread) }
                    } catch {
                        winners.fail("setValueIfAbsent \(AddRace.key(index)): \(error)")
                    }
                }
                group.leave()
            }.start()
        }
        group.wait()
        let won = winners.threads
        for (index, thread) in won.enumerated() {
            if let thread { WorkerOutput.line("W \(index) \(thread)") }
        }
        WorkerOutput.line("D \(won.count(where: { $0 != nil }))")
        for (index, thread) in won.enumerated() { check(level, key: index, wonBy: thread, winners) }
        do {
            try level.close()
        } catch {
            winners.fail("close: \(error)")
        }
        exit(winners.failures == 0 ? 0 : 4)
    }

    /// The operations of the level raced through.
    private struct Level: Sendable {
        var add: @Sendable (Data, String) throws -> Bool
        var read: @Sendable (String) throws -> Data?
        /// A read of the disk level (through the facade: `cache.disk`).
        var readDisk: @Sendable (String) throws -> Data?
        /// The memory level's copy (through the facade only).
        var inMemory: (@Sendable (String) -> Data?)?
        var close: @Sendable () throws -> Void
    }

    private func open() -> Level {
        var disk = DiskCache.Configuration()
        disk.autoTrimInterval = nil
        do {
            if throughFacade {
                let cache = try Cache<Data>(directory: directory, configuration: .init(disk: disk))
                return Level(add: { try cache.setValueIfAbsent($0, forKey: $1) },
                             read: { try cache.value(forKey: $0) }, readDisk: { try cache.disk.value(forKey: $0) },
                             inMemory: { cache.memory.value(forKey: $0) }, close: { try cache.close() })
            }
            let cache = try DiskCache(directory: directory, configuration: disk)
            let read: @Sendable (String) throws -> Data? = { try cache.value(forKey: $0) }
            return Level(add: { try cache.setValueIfAbsent($0, forKey: $1) }, read: read, readDisk: read,
                         inMemory: nil, close: { try cache.close() })
        } catch {
            Output.fail("open: \(error)")
        }
    }

    /// Checks what this process reads back for key `index`, which thread `thread` of this
    /// process stored (nil: another process did).
    private func check(_ level: Level, key index: Int, wonBy thread: Int?, _ winners: Winners) {
        let key = AddRace.key(index)
        // Before the read below, which promotes the stored value into memory: a copy this
        // process's memory level holds must be its own winning value, and nothing else.
        if let inMemory = level.inMemory {
            let writer = inMemory(key).flatMap { AddRace.writer(of: $0, forKey: index) }
            let found = writer.map { "the value of process \($0.process) thread \($0.thread)" } ?? "no value"
            if let thread, writer?.process != process || writer?.thread != thread {
                winners.fail("\(key): thread \(thread) stored it, yet memory holds \(found)")
            } else if thread == nil, inMemory(key) != nil {
                winners.fail("\(key): another process stored it, yet memory holds \(found)")
            }
        }
        for (what, read) in [("reads", level.read), ("the disk level holds", level.readDisk)] {
            do {
                guard let data = try read(key), let writer = AddRace.writer(of: data, forKey: index) else {
                    winners.fail("\(key): \(what) no intact value")
                    continue
                }
                if let thread, writer.process != process || writer.thread != thread {
                    winners.fail("\(key): thread \(thread) stored it, yet \(what) the value of \(writer)")
                } else if thread == nil, writer.process == process {
                    winners.fail("\(key): no thread of this process stored it, yet \(what) the value of \(writer)")
                }
            } catch {
                winners.fail("\(key): \(what): \(error)")
            }
        }
    }
}

/// Which thread of this process stored each key, and the failures seen.
private final class Winners: @unchecked Sendable {
    private let lock = NSLock()
    private var won: [Int?]
    private(set) var failures = 0

    init(keys: Int) { won = Array(repeating: nil, count: keys) }

    func record(_ index: Int, thread: Int) {
        lock.withLock {
            if let other = won[index] {
                failures += 1
                WorkerOutput.line("E \(AddRace.key(index)): stored by threads \(other) and \(thread)")
            }
            won[index] = thread
        }
    }

    func fail(_ message: String) {
        lock.withLock {
            failures += 1
            if failures <= 10 { WorkerOutput.line("E " + message.replacingNewlines()) }
        }
    }

    var threads: [Int?] { lock.withLock { won } }
}

import Foundation
import Testing
@testable import KVCache
@testable import KVCacheRedis

/// Two caches in two processes, each with its own directory, in front of one Redis: this
/// process's `Node` and a `KVCacheRedisTestWorker` child driven over its stdin and stdout.
@Suite(.enabled(if: RedisTestServer.url != nil, RedisTestServer.skipReason))
struct RedisTwoProcessTests {
    @Test func aSetInOneProcessIsReadInTheOtherAndAChangeDropsTheOthersMemoryCopy() async throws {
        // Off the test runner's threads: it blocks on outside processes for seconds.
        try await onOwnThread {
            let namespace = RedisTestServer.uniqueNamespace()
            let parent = try Node(namespace: namespace)
            let childDirectory = TemporaryDirectory("child")
            defer { childDirectory.remove() }
            let child = try RedisWorkerProcess(directory: childDirectory.url, url: try #require(RedisTestServer.url),
                                               namespace: namespace)

            // The child sets; the parent reads it from the remote level, then from its memory.
            try child.expect("set k one", "ok")
            // Else the child's invalidation could arrive after the parent's read and drop its copy.
            #expect(parent.waitForChanges(1))
            let first = try parent.cache.result(forKey: "k")
            #expect(first.source == .remote && first.value == Data("one".utf8))
            #expect(try parent.cache.result(forKey: "k").source == .memory)

            // The child changes it: the parent's memory (and disk) copy is dropped, and its next
            // read finds the new value.
            try child.expect("set k two", "ok")
            #expect(parent.waitForChanges(2))
            #expect(!parent.cache.memory.contains("k"))
            #expect(try !parent.cache.disk.contains("k"))
            let second = try parent.cache.result(forKey: "k")
            #expect(second.source == .remote && second.value == Data("two".utf8))

            // The other way: the parent sets, the child reads it from Redis, then from memory.
            try parent.cache.setValue(Data("three".utf8), forKey: "p")
            try child.expect("wait-changes 1", "ok")
            try child.expect("get p", "value remote three")
            try child.expect("get p", "value memory three")
            try parent.cache.setValue(Data("four".utf8), forKey: "p")
            try child.expect("wait-changes 2", "ok")
            try child.expect("in-memory p", "no")
            try child.expect("get p", "value remote four")

            // A removal in one is a miss in the other, both ways.
            try parent.cache.removeValue(forKey: "p")
            try child.expect("wait-changes 3", "ok")
            try child.expect("in-memory p", "no")
            try child.expect("get p", "none")
            try child.expect("remove k", "ok")
            #expect(parent.waitForChanges(3))
            #expect(!parent.cache.memory.contains("k"))
            #expect(try parent.cache.result(forKey: "k").source == .none)

            // Neither applied its own changes back to itself.
            #expect(parent.level.statistics.changesReceived == 3)
            #expect(try child.quit() == 0)
        }
    }
}

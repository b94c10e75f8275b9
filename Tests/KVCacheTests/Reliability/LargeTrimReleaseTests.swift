import Foundation
import Testing
@testable import KVCache

/// Issue 38, item 0: releasing a `Cache` after a million values were written through its
/// disk level (each a change reported to the cache) and half of them trimmed. The
/// listener of those reports used to grow by a chain link per report, and releasing the
/// chain overflowed the 8 MB stack (a crash, so the reproduction runs in a child process).
@Suite(.blockingOnItsOwnThread) struct LargeTrimReleaseTests {
    /// Async, and the child waited for on a thread of its own: the replay takes half a
    /// minute (minutes under AddressSanitizer), which would hold one of the two
    /// cooperative threads that the async suites beside it need.
    @Test func releasingACacheAfterAMillionEntryTrimIsSafe() async throws {
        let dir = TemporaryDirectory()
        defer { dir.remove() }
        let entries = 1_000_000
        let child = try ChildProcess(worker: ["release-after-trim", dir.path, String(entries)])
        let (lines, status) = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                var lines: [String] = []
                while let line = child.readLine() { lines.append(line) }
                continuation.resume(returning: (lines, child.wait()))
            }
        }
        #expect(status == 0, "the worker ended with status \(status) (128 + signal: a crash); it said \(lines)")
        #expect(lines == ["trimmed \(entries / 2)", "released"])
    }
}

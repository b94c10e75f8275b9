#if AsyncHTTPClient
import AsyncHTTPClient
import Foundation
import HTTPTypes
import KVCache
@testable import KVCacheHTTP
import NIOCore
import NIOHTTP1
import NIOPosix
import Synchronization
import Testing

extension CachingHTTPClientTests {
    /// A body of any size streams through CachingHTTPClient, on a miss (stored on the way) and on
    /// a hit (read from its file), without being held whole in memory. Nested in the serialized
    /// suite: its 100 MB child process must not starve the tests that time connections.
    @Suite struct Streaming {
        /// Resident memory is the whole process's, and other tests run beside this one: so the test
        /// runs itself again in a child process of its own, alone, and measures there.
        @Test func a100MBBodyStreamsThroughWithResidentMemoryGrowingByUnder16MB() async throws {
            if ProcessInfo.processInfo.environment[Self.aloneVariable] == "1" {
                try await measureA100MBBodyAlone()
                return
            }
            let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
            let output = FileManager.default.temporaryDirectory.appendingPathComponent("kvcache-streaming-\(UUID().uuidString).log")
            defer { try? FileManager.default.removeItem(at: output) }
            let status = try Self.runAlone(executable, ["--testing-library", "swift-testing", "--filter",
                                                        "a100MBBodyStreamsThroughWithResidentMemoryGrowingByUnder16MB"],
                                           output: output.path)
            let log = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
            #expect(status == 0, "the test alone: \(log)")
            #expect(log.contains("1 test"), "the child ran no test: \(log)")
        }

        static let aloneVariable = "KVCACHE_STREAMING_TEST_ALONE"

        /// Runs `executable` with `arguments` and this process's environment plus `aloneVariable`,
        /// its output into the file `output`; its exit status (128 + signal when killed).
        static func runAlone(_ executable: String, _ arguments: [String], output: String) throws -> Int32 {
            var actions = posix_spawn_file_actions_t()
            posix_spawn_file_actions_init(&actions)
            defer { posix_spawn_file_actions_destroy(&actions) }
            posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
            let environment = ProcessInfo.processInfo.environment.map { "\($0.key)=\($0.value)" } + ["\(aloneVariable)=1"]
            let argv = ([executable] + arguments).map { strdup($0) } + [nil]
            let envp = environment.map { strdup($0) } + [nil]
            defer { (argv + envp).forEach { free($0) } }
            var pid: pid_t = 0
            let code = posix_spawn(&pid, executable, &actions, nil, argv, envp)
            guard code == 0 else { throw KVCacheError.io(operation: "posix_spawn", path: executable, errno: code) }
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
            return status & 0x7f == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        }

        func measureA100MBBodyAlone() async throws {
            let size = 100 << 20
            let origin = try await StreamingNIOOrigin(size: size)
            let fixture = try HTTPCacheFixture()
            defer { fixture.remove() }
            let client = try CachingHTTPClient(cache: HTTPCache(storage: fixture.storage, configuration: .init(
                mode: .shared, maximumBodySize: 128 << 20)))
            // Warm up: the client's connection, the store's first write and read.
            for _ in 0..<2 { _ = try await client.executeStreaming(origin.request("/warm")).body.collect() }

            let baseline = residentBytes()
            var peak = baseline
            for expected in [HTTPCacheResponse.Outcome.miss, .hit] {
                let answer = try await client.executeStreaming(origin.request("/big"))
                #expect(answer.outcome == expected)
                var received = 0
                var mismatches = 0
                for try await chunk in answer.body {
                    // Every 4,099th byte is checked: enough to see a chunk lost, repeated or moved.
                    var index = (4_099 - received % 4_099) % 4_099
                    while index < chunk.count {
                        if chunk[chunk.startIndex + index] != StreamingNIOOrigin.byte(at: received + index) { mismatches += 1 }
                        index += 4_099
                    }
                    received += chunk.count
                    peak = max(peak, residentBytes())
                }
                #expect(received == size)
                #expect(mismatches == 0)
            }
            #expect(origin.requests == 2)
            let growth = peak - baseline
            #expect(growth < 16 << 20, "resident memory grew by \(growth >> 20) MB")
            try await client.shutdown()
            try await origin.stop()
        }

        @Test func aStreamedMissIsStoredAndTheBodyOfAHEADIsEmpty() async throws {
            let origin = try await StreamingNIOOrigin(size: 3 << 20)  // "/a" is 2 MB
            let (client, fixture) = try CachingHTTPClientTests.make()
            defer { fixture.remove() }
            let miss = try await client.executeStreaming(origin.request("/a"))
            #expect(miss.outcome == .miss)
            #expect(miss.body.knownCount == 2 << 20)  // the origin's Content-Length
            #expect(try await miss.body.collect().count == 2 << 20)
            let hit = try await client.executeStreaming(origin.request("/a"))
            #expect(hit.outcome == .hit)
            #expect(hit.body.knownCount == 2 << 20)
            let head = try await client.executeStreaming(origin.request("/a", method: .head))
            #expect(head.outcome == .hit)
            #expect(try await head.body.collect().isEmpty)
            #expect(origin.requests == 1)
            try await client.shutdown()
            try await origin.stop()
        }

        func residentBytes() -> Int {
            guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8),
                  let pages = statm.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
            else { return 0 }
            return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        }
    }

}

/// An HTTP/1.1 origin on a free loopback port whose every response is `size` bytes of a fixed
/// pattern, cacheable for a minute, written in 64 KB chunks as the socket takes them (so the
/// origin itself never holds the body).
final class StreamingNIOOrigin: Sendable {
    private let channel: any Channel
    private final class Counter: Sendable {
        let value = Mutex(0)
    }

    private let counter = Counter()
    let authority: String

    var requests: Int { counter.value.withLock { $0 } }

    init(size: Int) async throws {
        let counter = counter
        // Only /big is `size` bytes: other paths get 2 MB.
        let sizes: @Sendable (String) -> Int = { $0 == "/big" ? size : 2 << 20 }
        channel = try await NIOOrigin.listen { _ in
            StreamingHandler(sizes: sizes) { counter.value.withLock { $0 += 1 } }
        }
        authority = "127.0.0.1:\(channel.localAddress!.port!)"
    }

    func request(_ path: String, method: HTTPRequest.Method = .get) -> HTTPRequest {
        HTTPRequest(method: method, scheme: "http", authority: authority, path: path)
    }

    func stop() async throws {
        try await channel.close()
    }

    /// The body's byte at `index`: a pattern whose period (251) no chunk size shares.
    static func byte(at index: Int) -> UInt8 { UInt8(index % 251) }

    /// The pattern from byte 0, long enough to copy any chunk from.
    static let pattern: [UInt8] = (0..<(64 << 10) + 251).map { byte(at: $0) }
}

private final class StreamingHandler: ChannelInboundHandler {
    typealias InboundIn = HTTPServerRequestPart
    typealias OutboundOut = HTTPServerResponsePart

    private let sizes: @Sendable (String) -> Int
    private var size = 0
    private let received: () -> Void
    private var isHead = false
    private var sent = 0
    private var isWriting = false

    init(sizes: @escaping @Sendable (String) -> Int, received: @escaping () -> Void) {
        self.sizes = sizes
        self.received = received
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let head):
            isHead = head.method == .HEAD
            size = sizes(head.uri)
        case .body:
            break
        case .end:
            received()
            var headers = HTTPHeaders()
            headers.add(name: "Cache-Control", value: "max-age=60")
            headers.add(name: "Content-Length", value: String(size))
            headers.add(name: "Date", value: HTTPDate.format(Date().timeIntervalSince1970))
            context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))),
                          promise: nil)
            if isHead {
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                return
            }
            sent = 0
            isWriting = true
            writeMore(context: context)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if isWriting { writeMore(context: context) }
        context.fireChannelWritabilityChanged()
    }

    /// Writes chunks while the channel is writable; the rest when it is again.
    private func writeMore(context: ChannelHandlerContext) {
        while isWriting && context.channel.isWritable {
            let count = min(64 << 10, size - sent)
            if count == 0 {
                isWriting = false
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
                return
            }
            var buffer = context.channel.allocator.buffer(capacity: count)
            let start = sent
            let phase = start % 251
            buffer.writeBytes(StreamingNIOOrigin.pattern[phase..<phase + count])
            sent += count
            context.writeAndFlush(wrapOutboundOut(.body(.byteBuffer(buffer))), promise: nil)
        }
    }
}
#endif

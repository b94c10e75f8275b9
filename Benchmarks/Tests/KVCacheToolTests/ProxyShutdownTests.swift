import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The built `kvcache-proxy`, run as a child process: how it stops.
@Suite struct ProxyShutdownTests {
    /// `$KVCACHE_PROXY`, or `kvcache-proxy` beside the test binary.
    static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["KVCACHE_PROXY"] { return path }
        return ToolProcess.binary.deletingLastPathComponent().appendingPathComponent("kvcache-proxy").path
    }()

    /// A loopback port nothing listens on now (the kernel's choice for port 0).
    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer in
                bind(fd, pointer, length) == 0 && getsockname(fd, pointer, &length) == 0
            }
        }
        guard bound else { throw POSIXError(.EADDRINUSE) }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Without `--dir` the proxy keeps its store in a temporary directory of its own: SIGTERM
    /// or SIGINT (a service manager's stop, Ctrl-C) stops it cleanly and removes that directory.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: binary), "kvcache-proxy is not built"),
          arguments: [SIGTERM, SIGINT])
    func aSignalStopsItAndRemovesItsTemporaryDirectory(signal: Int32) throws {
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("kvcache-proxy-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temporary) }
        let child = try ChildProcess(Self.binary, ["--upstream", "http://127.0.0.1:9", "--port", "\(try Self.freePort())"],
                                     environment: ["TMPDIR": temporary.path])
        // Ready once it listens (it logs so): its signal handling is in place by then.
        let deadline = Date().addingTimeInterval(60)
        while !child.output.contains("listening"), Date() < deadline {
            try #require(kill(child.pid, 0) == 0, "kvcache-proxy exited: \(child.output)")
            usleep(10_000)
        }
        try #require(child.output.contains("listening"), "kvcache-proxy did not start: \(child.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path).count == 1)

        kill(child.pid, signal)
        #expect(child.wait() == 0, "\(child.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path).isEmpty)
    }
}

import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The built `kvcache-proxy`, run as a child process: how it stops.
@Suite struct ProxyShutdownTests {
    /// `$KVCACHE_PROXY`, or `kvcache-proxy` beside the test binary.
    static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["KVCACHE_PROXY"] { return path }
        return ToolProcess.binary.deletingLastPathComponent().appendingPathComponent("kvcache-proxy").path
    }()

    /// Without `--dir` the proxy keeps its store in a temporary directory of its own: SIGTERM
    /// or SIGINT (a service manager's stop, Ctrl-C) stops it cleanly and removes that directory.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: binary), "kvcache-proxy is not built"),
          arguments: [SIGTERM, SIGINT])
    func aSignalStopsItAndRemovesItsTemporaryDirectory(signal: Int32) throws {
        let temporary = FileManager.default.temporaryDirectory.appendingPathComponent("kvcache-proxy-test-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: temporary) }
        let child = try ChildProcess(Self.binary, ["--upstream", "http://127.0.0.1:9", "--port", "0"],
                                     environment: ["TMPDIR": temporary.path])
        // Ready once it listens (it logs so, with the port it took): its signal handling is in place by then.
        let deadline = Date().addingTimeInterval(60)
        while !child.output.contains("listening"), Date() < deadline {
            try #require(kill(child.pid, 0) == 0, "kvcache-proxy exited: \(child.output)")
            usleep(10_000)
        }
        try #require(child.output.contains("listening"), "kvcache-proxy did not start: \(child.output)")
        // `--port 0` took a free port, and says which.
        let port = child.output.firstMatch(of: /listening on 127\.0\.0\.1:(\d+)/).flatMap { Int($0.1) }
        #expect(port.map { $0 > 0 } == true, "\(child.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path).count == 1)

        kill(child.pid, signal)
        #expect(child.wait() == 0, "\(child.output)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path).isEmpty)
    }

    /// Settings out of range are refused before it starts (status 64, the message names them).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: binary), "kvcache-proxy is not built"),
          arguments: [["--max-body-mib", "0"], ["--max-body-mib", "-1"], ["--max-body-mib", "2000000"],
                      ["--memory-entries", "0"], ["--port", "70000"]])
    func aSettingOutOfRangeIsRefused(arguments: [String]) throws {
        let child = try ChildProcess(Self.binary, ["--upstream", "http://127.0.0.1:9"] + arguments)
        #expect(child.wait() == 64, "\(child.output)")
        #expect(child.output.contains(arguments[0]), "\(child.output)")
    }
}

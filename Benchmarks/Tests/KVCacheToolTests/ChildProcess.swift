import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// A child process started with posix_spawn, with an empty signal mask and default signal
/// handlers: a child started from a test thread would otherwise inherit that thread's blocked
/// signals, and a server that blocks SIGTERM never stops (unlike one started from a shell).
/// Its stdout and stderr go to one file, so no pipe can fill up and block it.
final class ChildProcess {
    let pid: pid_t
    let outputFile: URL
    private var exitStatus: Int32?

    init(_ executable: String, _ arguments: [String], environment: [String: String] = [:],
         outputFile: URL = FileManager.default.temporaryDirectory.appendingPathComponent("kvcache-child-\(UUID().uuidString)")) throws {
        self.outputFile = outputFile
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, outputFile.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t(), all = sigset_t()
        sigemptyset(&none)
        sigfillset(&all)
        posix_spawnattr_setsigmask(&attributes, &none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        var argv = ([executable] + arguments).map { strdup($0) }
        argv.append(nil)
        defer { argv.forEach { free($0) } }
        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        var envp = merged.map { strdup("\($0.key)=\($0.value)") }
        envp.append(nil)
        defer { envp.forEach { free($0) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard spawned == 0 else { throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO) }
        self.pid = pid
    }

    deinit {
        if exitStatus == nil { kill(pid, SIGKILL); _ = wait() }
        try? FileManager.default.removeItem(at: outputFile)
    }

    /// What it has written so far.
    var output: String { String(decoding: (try? Data(contentsOf: outputFile)) ?? Data(), as: UTF8.self) }

    /// Waits for it to exit; its exit status, or 128 + the signal that ended it.
    @discardableResult
    func wait() -> Int32 {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
        let result = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        exitStatus = result
        return result
    }
}

import Foundation
import Testing

/// `scripts/lib/redis.sh`, which `scripts/test` and `.ci/run` use to start and stop the Redis
/// servers the remote level's tests need, run by bash against a real `redis-server`.
@Suite struct RedisScriptTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static let redisServer: String? = ["/usr/bin/redis-server", "/usr/local/bin/redis-server"]
        .first { FileManager.default.isExecutableFile(atPath: $0) }

    /// Runs `script` in bash, in the repository, after sourcing the helpers; returns its status and output.
    func bash(_ script: String) throws -> (status: Int32, output: String) {
        let child = try ChildProcess("/bin/bash", ["-c", "set -euo pipefail\ncd \"$1\"\nsource scripts/lib/redis.sh\n" + script,
                                                   "bash", Self.repository.path])
        let status = child.wait()
        return (status, child.output)
    }

    /// A server stopped in the middle of its work still logs its shutdown (reopening its log file)
    /// after it is told to stop: `kvcache_redis_stop` must return only once it has exited, or
    /// the log lands in a directory being removed and the caller's EXIT trap fails (as CI did).
    @Test(.enabled(if: redisServer != nil, "redis-server is not installed"))
    func stoppingWaitsForEveryServerToExitAndRemovesItsDirectory() throws {
        let result = try bash("""
            kvcache_redis_start > /dev/null
            directory=$kvcache_redis_dir
            pid=$(cat "$directory/server.pid")
            # The server is held (SIGSTOP) when it is told to stop, and resumes 300 ms later: a slow shutdown.
            kill -STOP "$pid"
            (sleep 0.3; kill -CONT "$pid") &
            kvcache_redis_stop
            # Running: not gone, and not a zombie (an exited daemon nobody has reaped yet).
            if kill -0 "$pid" 2>/dev/null && ! grep -qE '^[0-9]+ \\(.*\\) Z' "/proc/$pid/stat"; then echo "still running: $pid"; kill -CONT "$pid"; kill -9 "$pid"; exit 3; fi
            wait
            if [ -e "$directory" ]; then echo "left behind: $(ls -R "$directory")"; rm -rf "$directory"; exit 4; fi
            echo stopped
            """)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output.hasSuffix("stopped\n"), "\(result.output)")
    }

    /// Stopping twice, or with nothing started, does nothing and succeeds.
    @Test(.enabled(if: redisServer != nil, "redis-server is not installed"))
    func stoppingWithNothingRunningSucceeds() throws {
        let result = try bash("""
            kvcache_redis_stop
            kvcache_redis_start > /dev/null
            kvcache_redis_stop
            kvcache_redis_stop
            echo stopped
            """)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.output == "stopped\n", "\(result.output)")
    }
}

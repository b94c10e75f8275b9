import Foundation
import KVCache
import KVCacheRedis
import KVCacheTestSupport
#if canImport(Glibc)
import Glibc
#endif

// The child process of the two-process Redis tests (Tests/KVCacheRedisTests/RedisTwoProcessTests):
// a `Cache<Data>` in its own directory in front of the Redis at `url`, driven by commands on
// stdin, one a line, each answered with one line on stdout.
//
//   KVCacheRedisTestWorker <directory> <redis url> <namespace> [defaults] [setting=milliseconds ...]
//
// Settings of the level (default: 5 s timeouts, the others RedisLevel's defaults; `defaults`:
// every one RedisLevel's default): connect-timeout-ms, command-timeout-ms, break-ms,
// check-ms (subscriptionCheckInterval), retry-ms (subscriptionRetryInterval).
//   KVCacheRedisTestWorker staleness <redis url> [writes] [keys]   (see Staleness.swift)
//
// Prints `ready` once the cache is open (subscribed), then for each command:
//   set <key> <value>         stores the UTF-8 bytes of <value>        → ok
//   get <key>                 reads through the cache                  → value <source> <value> | none
//   remove <key>              removes from every level                 → ok
//   in-memory <key>           whether the memory level holds the key  → yes | no
//   wait-changes <count>      until <count> other nodes' changes were applied (10 s at most)
//                                                                      → ok | timeout <received>
//   wait-subscriptions <count>  until the subscriber has subscribed <count> times (10 s at most)
//                                                                      → ok | timeout <subscriptions>
//   wait-value <key> <value>  until a read returns <value> (`-`: none), reading again after each
//                             change applied and each subscription made (10 s at most)
//                                                                      → ok | timeout <last read>
//   quit                      closes the cache and exits 0             → bye
// A failure prints `error <message>`; end of input closes the cache and exits.

func answer(_ text: String) {
    WorkerOutput.line(text.replacingNewlines())
}

let arguments = CommandLine.arguments
// The staleness measurement (Staleness.swift): the parent and its two children.
switch arguments.dropFirst().first {
case "staleness": exit(Staleness.run(Array(arguments.dropFirst(2))))
case "staleness-reader": exit(Staleness.reader(Array(arguments.dropFirst(2))))
case "staleness-writer": exit(Staleness.writer(Array(arguments.dropFirst(2))))
default: break
}
guard arguments.count >= 4 else {
    answer("error usage: KVCacheRedisTestWorker <directory> <redis url> <namespace> [setting=milliseconds ...]")
    exit(2)
}

/// Serves commands until `quit` or the end of input; returns the exit status. In a function,
/// so the level and the cache are released before the process exits: LeakSanitizer cannot
/// follow a `Data`'s storage from a global alive at exit, and would report it leaked.
func serve() -> Int32 {
    let level: RedisLevel
    let cache: Cache<Data>
    do {
        var levelConfiguration = RedisLevel.Configuration(address: try RedisAddress(arguments[2]), namespace: arguments[3])
        // A loaded test machine must not turn a slow moment into a failed call.
        let keepsDefaults = arguments.dropFirst(4).first == "defaults"
        if !keepsDefaults {
            levelConfiguration.connectTimeout = .seconds(5)
            levelConfiguration.commandTimeout = .seconds(5)
        }
        for setting in arguments.dropFirst(keepsDefaults ? 5 : 4) {
            let parts = setting.split(separator: "=")
            guard parts.count == 2, let milliseconds = Int64(parts[1]) else {
                throw KVCacheError.invalidArgument("not a setting: \(setting)")
            }
            let duration = Duration.milliseconds(milliseconds)
            switch parts[0] {
            case "connect-timeout-ms": levelConfiguration.connectTimeout = duration
            case "command-timeout-ms": levelConfiguration.commandTimeout = duration
            case "break-ms": levelConfiguration.breakDuration = duration
            case "check-ms": levelConfiguration.subscriptionCheckInterval = duration
            case "retry-ms": levelConfiguration.subscriptionRetryInterval = duration
            default: throw KVCacheError.invalidArgument("unknown setting: \(setting)")
            }
        }
        level = try RedisLevel(configuration: levelConfiguration)
        var configuration = Cache<Data>.Configuration()
        configuration.disk.autoTrimInterval = nil
        configuration.remote = level
        cache = try Cache(directory: URL(fileURLWithPath: arguments[1]), coder: DataCoder(), configuration: configuration)
    } catch {
        answer("error open: \(error)")
        return 3
    }
    answer("ready")

    while let line = readLine() {
        let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        do {
            switch (words.first, words.count) {
            case ("set", 3):
                try cache.setValue(Data(words[2].utf8), forKey: words[1])
                answer("ok")
            case ("get", 2):
                let result = try cache.result(forKey: words[1])
                if let value = result.value {
                    answer("value \(result.source) \(String(decoding: value, as: UTF8.self))")
                } else {
                    answer("none")
                }
            case ("remove", 2):
                try cache.removeValue(forKey: words[1])
                answer("ok")
            case ("in-memory", 2):
                answer(cache.memory.contains(words[1]) ? "yes" : "no")
            case ("wait-changes", 2):
                guard let count = Int(words[1]) else { throw KVCacheError.invalidArgument("not a count: \(words[1])") }
                let applied = level.waitForStatistics(timeout: .seconds(10)) { $0.changesReceived >= count }
                answer(applied ? "ok" : "timeout \(level.statistics.changesReceived)")
            case ("wait-subscriptions", 2):
                guard let count = Int(words[1]) else { throw KVCacheError.invalidArgument("not a count: \(words[1])") }
                let made = level.waitForStatistics(timeout: .seconds(10)) { $0.subscriptions >= count }
                answer(made ? "ok" : "timeout \(level.statistics.subscriptions)")
            case ("wait-value", 3):
                let expected = words[2] == "-" ? nil : Data(words[2].utf8)
                let deadline = Date(timeIntervalSinceNow: 10)
                while true {
                    let seen = level.statistics
                    let value = try cache.value(forKey: words[1])
                    if value == expected {
                        answer("ok")
                        break
                    }
                    let changed = level.waitForStatistics(timeout: .seconds(max(0, deadline.timeIntervalSinceNow))) {
                        $0.changesReceived != seen.changesReceived || $0.subscriptions != seen.subscriptions
                    }
                    if !changed {
                        answer("timeout \(value.map { String(decoding: $0, as: UTF8.self) } ?? "-")")
                        break
                    }
                }
            case ("quit", 1):
                try cache.close()
                answer("bye")
                return 0
            default:
                answer("error unknown command: \(line)")
            }
        } catch {
            answer("error \(error)")
        }
    }
    try? cache.close()
    return 0
}

exit(serve())

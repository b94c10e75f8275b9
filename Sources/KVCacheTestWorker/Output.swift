#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import KVCacheTestSupport

/// How the worker gives up: a line `E <message>` to the parent, then exit 3.
enum Output {
    static func fail(_ message: String) -> Never {
        WorkerOutput.line("E " + message.replacingNewlines())
        exit(3)
    }
}

#if Logging
import Logging
#endif

/// Where the failures that reach no caller go: background trims and sweeps, a commit
/// connection that could not be opened, a manifest rebuilt after corruption. With the
/// package trait `Logging`, to the configured swift-log `Logger`; otherwise nowhere
/// (the statistics count what they can).
struct Diagnostics: Sendable {
    #if Logging
    var logger: Logger?
    #endif

    /// Reports nowhere.
    static let none = Diagnostics()

    /// `what` failed with `error`; the cache carried on.
    func failed(_ what: @autoclosure () -> String, _ error: any Error, path: String) {
        #if Logging
        logger?.warning("\(what()) failed: \(String(describing: error))", metadata: ["kvcache.path": "\(path)"])
        #endif
    }

    /// Something worth knowing happened (a manifest rebuilt, a fallback taken).
    func notice(_ message: @autoclosure () -> String, path: String) {
        #if Logging
        logger?.notice("\(message())", metadata: ["kvcache.path": "\(path)"])
        #endif
    }

    /// Runs `body`; a failure is reported as `what` and gives nil.
    func attempt<Result>(_ what: @autoclosure () -> String, path: String, _ body: () throws -> Result) -> Result? {
        do {
            return try body()
        } catch {
            failed(what(), error, path: path)
            return nil
        }
    }
}

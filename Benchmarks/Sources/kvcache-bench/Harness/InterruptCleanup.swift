import Dispatch
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Removes the workspace when the run is interrupted (Ctrl-C, SIGTERM,
/// SIGHUP), so an aborted run does not leave gigabytes of store files behind, and
/// kills the children it started (the remote suite's redis-server and peer).
/// SIGPIPE is ignored: a closed stdout (`| head`) lets the run finish and clean up.
final class InterruptCleanup: @unchecked Sendable {
    // Kept alive for the whole run; only touched on the main thread.
    private var sources: [DispatchSourceSignal] = []

    init(removing directory: URL) {
        signal(SIGPIPE, SIG_IGN)
        for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
            signal(signalNumber, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
            source.setEventHandler {
                // Holding the lock keeps the benchmark thread's own cleanup (after the
                // error it gets once the tree is gone) from exiting under our feet.
                // It exits holding the lock, which is never released.
                Workspace.cleanupLock.withLock { () -> Never in
                    Progress.log("interrupted: removing \(directory.path)")
                    ChildProcesses.killAll()
                    // The benchmark thread is still writing: move the tree out of its way
                    // first, then delete it.
                    let doomed = directory.path + ".interrupted"
                    if rename(directory.path, doomed) == 0 {
                        try? FileManager.default.removeItem(atPath: doomed)
                    }
                    exit(128 + signalNumber)
                }
            }
            source.resume()
            sources.append(source)
        }
    }

    deinit {
        for source in sources { source.cancel() }
    }
}

#if os(Linux)
import Foundation
import Glibc

/// Calls `onWake` on a thread of its own every `interval` seconds, and at once
/// when the kernel reports that a PSI trigger on the file fired.
///
/// Dispatch cannot wait for `POLLPRI`, which is how PSI triggers signal, so
/// this is a plain thread blocked in `poll(2)`.
final class PressureFileWatcher: @unchecked Sendable {
    /// The PSI file opened with a trigger registered, or -1 when the kernel refused one.
    private let triggerFD: Int32
    /// `stop()` writes a byte here to wake the thread; the thread closes all descriptors on exit.
    private let wakeRead: Int32
    private let wakeWrite: Int32
    private let timeoutMilliseconds: Int32
    private let onWake: @Sendable (_ triggered: Bool) -> Void
    private let exited = DispatchSemaphore(value: 0)
    // Written once before the thread starts, read by `stop()`.
    private var thread: Thread?

    /// Whether the kernel accepted the trigger; when not, the watcher only wakes every `interval`.
    var usesKernelTrigger: Bool { triggerFD >= 0 }

    /// - Throws: `KVCacheError.io` when no pipe can be created (out of descriptors).
    init(path: String, trigger: String?, interval: Double, onWake: @escaping @Sendable (_ triggered: Bool) -> Void) throws {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw KVCacheError.io(operation: "pipe", path: path, errno: errno) }
        for fd in ends {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        (wakeRead, wakeWrite) = (ends[0], ends[1])
        triggerFD = trigger.map { Self.openTrigger($0, path: path) } ?? -1
        timeoutMilliseconds = Seconds.clampedMilliseconds(interval)
        self.onWake = onWake
    }

    /// Registers `trigger` on the PSI file; -1 when the kernel refuses it (it
    /// demands privileges for some windows, and older kernels have no triggers).
    private static func openTrigger(_ trigger: String, path: String) -> Int32 {
        let fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return -1 }
        // Writing the trigger into an ordinary file (a stand-in in tests) would overwrite its text.
        guard isKernelPressureFile(fd) else {
            close(fd)
            return -1
        }
        // The kernel expects the terminating NUL as part of the write.
        let written = trigger.withCString { write(fd, $0, strlen($0) + 1) }
        guard written > 0 else {
            close(fd)
            return -1
        }
        return fd
    }

    /// Kernel PSI files report a size of 0 however much they hold; a stand-in
    /// with text in it does not.
    private static func isKernelPressureFile(_ fd: Int32) -> Bool {
        var info = stat()
        return fstat(fd, &info) == 0 && info.st_size == 0
    }

    func start() {
        // Weak: the watcher holds the thread, so a strong capture would be a cycle
        // that outlives `stop()`. `run()` keeps the watcher alive while it runs.
        let thread = Thread { [weak self] in self?.run() }
        thread.name = "KVCache.MemoryPressureMonitor"
        self.thread = thread
        thread.start()
    }

    /// Stops the thread and, unless called from it, waits until it has exited,
    /// so `onWake` is not called after this returns.
    func stop() {
        var byte: UInt8 = 1
        _ = write(wakeWrite, &byte, 1)
        if Thread.current != thread { exited.wait() }
    }

    private func run() {
        defer {
            for fd in [wakeRead, wakeWrite, triggerFD] where fd >= 0 { close(fd) }
            exited.signal()
        }
        // poll(2) ignores negative descriptors, so a refused trigger needs no special case.
        var fds = [
            pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
            pollfd(fd: triggerFD, events: Int16(POLLPRI), revents: 0),
        ]
        while true {
            let ready = poll(&fds, nfds_t(fds.count), timeoutMilliseconds)
            // Only EINTR is expected here: retry.
            if ready < 0 { continue }
            if fds[0].revents != 0 { return }
            let triggered = fds[1].revents & Int16(POLLPRI) != 0
            if fds[1].revents & Int16(POLLERR | POLLNVAL) != 0 {
                // The cgroup went away; keep reading on the timeout only.
                fds[1].fd = -1
            }
            onWake(triggered)
        }
    }
}
#endif

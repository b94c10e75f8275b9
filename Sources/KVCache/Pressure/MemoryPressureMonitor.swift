import Foundation

/// Trims registered memory caches when the system runs short of memory: the
/// server-side counterpart of iOS memory warnings.
///
/// On Linux it watches pressure stall information (PSI), the share of time tasks
/// wait for memory, in the process's cgroup `memory.pressure` or
/// `/proc/pressure/memory`. It reads the file every `pollInterval` and,
/// where the kernel allows it, also registers a PSI trigger that wakes it at once.
/// On Darwin it listens to the system's memory-pressure events.
///
/// When pressure reaches `.warning` caches keep `warningTrimFraction` of their
/// contents; at `.critical`, `criticalTrimFraction`. A level that persists trims
/// again every `retrimInterval`; a rise trims at once.
///
/// It is off until started:
///
///     try MemoryPressureMonitor.shared.start()
public final class MemoryPressureMonitor: @unchecked Sendable {
    /// A monitor with the default configuration, for the whole process.
    public static let shared = MemoryPressureMonitor(validated: Configuration())

    /// The configuration the monitor was created with.
    public let configuration: Configuration

    private struct WeakTarget {
        weak var target: (any MemoryPressureTrimmable)?
    }

    /// Serializes `start()` and `stop()`, which run trims and wait for the watcher thread outside `lock`.
    private let lifecycle = PThreadMutex()
    // Everything below is guarded by `lock`. Targets are trimmed after it is released.
    private let lock = PThreadMutex()
    private var targets: [ObjectIdentifier: WeakTarget] = [:]
    /// The last level that trimmed, and when (seconds of uptime); `nil` once pressure is back to normal.
    private var lastTrim: (level: MemoryPressureLevel, time: Double)?
    private var pressureFile: String?
    #if canImport(Darwin)
    private var source: (any DispatchSourceMemoryPressure)?
    #elseif os(Linux)
    private var watcher: PressureFileWatcher?
    #endif

    /// Creates a stopped monitor.
    ///
    /// - Throws: `KVCacheError.invalidArgument` when a threshold, fraction or interval is out of range.
    public convenience init(configuration: Configuration = Configuration()) throws {
        try configuration.validate()
        self.init(validated: configuration)
    }

    private init(validated configuration: Configuration) {
        self.configuration = configuration
    }

    deinit { stop() }

    // MARK: Targets

    /// Trims `target` whenever pressure rises, until it is unregistered or
    /// deallocated. The monitor holds it weakly.
    public func register(_ target: any MemoryPressureTrimmable) {
        lock.withLock {
            targets = targets.filter { $0.value.target != nil }
            targets[ObjectIdentifier(target)] = WeakTarget(target: target)
        }
    }

    /// Stops trimming `target`.
    public func unregister(_ target: any MemoryPressureTrimmable) {
        _ = lock.withLock { targets.removeValue(forKey: ObjectIdentifier(target)) }
    }

    // MARK: Responding to pressure

    /// Trims every registered target as the monitor does at `level`; `.normal`
    /// does nothing. For applications with their own pressure signal, and tests.
    public func handle(_ level: MemoryPressureLevel) {
        guard let fraction = configuration.trimFraction(for: level) else { return }
        let live = lock.withLock { targets.values.compactMap(\.target) }
        // The configuration's fractions are validated in 0...1, so no trim throws.
        for target in live { try? target.trim(toFraction: fraction, reason: .pressure) }
    }

    /// Reads the PSI file once and trims as the running monitor would; returns
    /// the level it read. Lets tests and callers with their own schedule drive
    /// the monitor without starting it.
    ///
    /// - Throws: `KVCacheError.io` when the file cannot be read (or none was
    ///   found), `KVCacheError.invalidArgument` when it is not in PSI format.
    @discardableResult
    public func checkNow() throws -> MemoryPressureLevel {
        let level = try readLevel()
        respond(to: level)
        return level
    }

    private func readLevel() throws -> MemoryPressureLevel {
        configuration.level(of: try PressureStallInformation(contentsOf: try resolvedPressureFile()))
    }

    /// Trims if `level` rose since the last trim, or stayed up for `retrimInterval`.
    private func respond(to level: MemoryPressureLevel) {
        let now = ProcessInfo.processInfo.systemUptime
        let trims: Bool = lock.withLock {
            guard level > .normal else {
                lastTrim = nil
                return false
            }
            if let lastTrim, level <= lastTrim.level, now - lastTrim.time < configuration.retrimInterval.seconds {
                return false
            }
            lastTrim = (level, now)
            return true
        }
        if trims { handle(level) }
    }

    /// The configured PSI file, else the one found for this process (remembered).
    private func resolvedPressureFile() throws -> String {
        if let path = configuration.pressureFile { return path }
        if let path = lock.withLock({ pressureFile }) { return path }
        guard let path = PressureFileLocator.memoryPressureFile() else {
            throw KVCacheError.io(operation: "open", path: PressureFileLocator.systemFile, errno: ENOENT)
        }
        lock.withLock { pressureFile = path }
        return path
    }

    // MARK: Starting and stopping

    /// Whether the monitor is watching for pressure.
    public var isRunning: Bool {
        lock.withLock {
            #if canImport(Darwin)
            source != nil
            #elseif os(Linux)
            watcher != nil
            #else
            false
            #endif
        }
    }

    /// Whether the kernel accepted the PSI trigger, so the monitor wakes as soon
    /// as pressure builds rather than on its next read. `false` when stopped.
    public var usesKernelTrigger: Bool {
        #if os(Linux)
        lock.withLock { watcher?.usesKernelTrigger ?? false }
        #else
        false
        #endif
    }

    /// Starts watching; does nothing if already running. On Linux it reads the
    /// PSI file once at once, so pressure that is already high trims now.
    ///
    /// - Throws: `KVCacheError.io` when no PSI file can be read (a kernel
    ///   without PSI or booted with `psi=0`), `KVCacheError.invalidArgument`
    ///   when the file is not in PSI format.
    public func start() throws {
        #if canImport(Darwin)
        lock.withLock {
            guard source == nil else { return }
            let source = DispatchSource.makeMemoryPressureSource(eventMask: [.warning, .critical], queue: .global())
            // @Sendable: the handler runs on a Dispatch queue, never on the caller's actor.
            source.setEventHandler { @Sendable [weak self] in self?.handleDispatchEvent() }
            self.source = source
            source.activate()
        }
        #elseif os(Linux)
        try lifecycle.withLock {
            guard lock.withLock({ self.watcher == nil }) else { return }
            let path = try resolvedPressureFile()
            try checkNow()
            let watcher = try PressureFileWatcher(
                path: path,
                trigger: configuration.trigger?.command,
                interval: configuration.pollInterval.seconds
            ) { [weak self] triggered in self?.wake(triggered: triggered) }
            lock.withLock { self.watcher = watcher }
            watcher.start()
        }
        #endif
    }

    /// Stops watching; registered targets stay registered. Once it returns no
    /// trim started by the monitor's own watching begins (unless called from
    /// within such a trim, which it does not wait for).
    public func stop() {
        #if canImport(Darwin)
        lock.withLock {
            source?.cancel()
            source = nil
        }
        #elseif os(Linux)
        lifecycle.withLock {
            let watcher: PressureFileWatcher? = lock.withLock {
                defer { self.watcher = nil }
                return self.watcher
            }
            watcher?.stop()
        }
        #endif
    }

    #if canImport(Darwin)
    private func handleDispatchEvent() {
        guard let event = lock.withLock({ source?.data }) else { return }
        if event.contains(.critical) {
            handle(.critical)
        } else if event.contains(.warning) {
            handle(.warning)
        }
    }
    #endif

    #if os(Linux)
    /// A kernel trigger means stalls crossed its threshold just now, which
    /// `avg10` may not show yet: treat it as at least `.warning`.
    private func wake(triggered: Bool) {
        // A file that went away or turned unreadable is skipped until it comes back.
        guard let level = try? readLevel() else { return }
        respond(to: triggered ? max(level, .warning) : level)
    }
    #endif
}

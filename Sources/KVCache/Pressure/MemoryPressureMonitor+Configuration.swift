extension MemoryPressureMonitor {
    /// What a `MemoryPressureMonitor` watches and how hard it makes caches trim.
    ///
    /// Thresholds are PSI `avg10` values: the percentage of the last ten seconds
    /// in which some (or all) tasks stalled waiting for memory.
    public struct Configuration: Sendable {
        /// The PSI file to read. `nil` (the default) picks the process's cgroup
        /// `memory.pressure`, else `/proc/pressure/memory`. On Darwin `start()`
        /// listens to the system's memory-pressure events instead.
        public var pressureFile: String?
        /// `some avg10` at or above which pressure is `.warning`. Default 10.
        public var warningThreshold: Double
        /// `full avg10` at or above which pressure is `.critical`. Default 5.
        public var criticalThreshold: Double
        /// Seconds between reads of the PSI file. Default 1.
        public var pollInterval: Double
        /// Seconds after which pressure that stays at the same level trims again.
        /// Default 10, the window of `avg10`, so each trim sees fresh figures.
        public var retrimInterval: Double
        /// The fraction of their contents caches keep on `.warning`. Default 0.5.
        public var warningTrimFraction: Double
        /// The fraction of their contents caches keep on `.critical`. Default 0 (empty them).
        public var criticalTrimFraction: Double
        /// A kernel PSI trigger that wakes the monitor as soon as stalls exceed it,
        /// between reads; `nil` to rely on reads alone. When the kernel refuses
        /// the trigger (no permission, no support) the monitor reads only.
        public var trigger: Trigger?

        public init(
            pressureFile: String? = nil,
            warningThreshold: Double = 10,
            criticalThreshold: Double = 5,
            pollInterval: Double = 1,
            retrimInterval: Double = 10,
            warningTrimFraction: Double = 0.5,
            criticalTrimFraction: Double = 0,
            trigger: Trigger? = Trigger()
        ) {
            self.pressureFile = pressureFile
            self.warningThreshold = warningThreshold
            self.criticalThreshold = criticalThreshold
            self.pollInterval = pollInterval
            self.retrimInterval = retrimInterval
            self.warningTrimFraction = warningTrimFraction
            self.criticalTrimFraction = criticalTrimFraction
            self.trigger = trigger
        }

        func validate() throws {
            for (name, value) in [("warningThreshold", warningThreshold), ("criticalThreshold", criticalThreshold)]
            where !(0...100).contains(value) {
                throw KVCacheError.invalidArgument("\(name) must be a percentage in 0...100, not \(value)")
            }
            for (name, value) in [("warningTrimFraction", warningTrimFraction), ("criticalTrimFraction", criticalTrimFraction)]
            where !(0...1).contains(value) {
                throw KVCacheError.invalidArgument("\(name) must be in 0...1, not \(value)")
            }
            guard pollInterval > 0, pollInterval.isFinite else {
                throw KVCacheError.invalidArgument("pollInterval must be a positive number of seconds, not \(pollInterval)")
            }
            guard retrimInterval >= 0 else {
                throw KVCacheError.invalidArgument("retrimInterval must not be negative, not \(retrimInterval)")
            }
            try trigger?.validate()
        }

        /// The monitor's trim fraction for `level`; `nil` for `.normal`.
        func trimFraction(for level: MemoryPressureLevel) -> Double? {
            switch level {
            case .normal: return nil
            case .warning: return warningTrimFraction
            case .critical: return criticalTrimFraction
            }
        }

        /// The pressure level a PSI reading shows under these thresholds.
        func level(of reading: PressureStallInformation) -> MemoryPressureLevel {
            if let full = reading.full, full.avg10 >= criticalThreshold { return .critical }
            if reading.some.avg10 >= warningThreshold { return .warning }
            return .normal
        }
    }

    /// A kernel PSI trigger: fires when tasks stall on memory for `stall`
    /// seconds in total within any `window` seconds (PSI `some`).
    ///
    /// The default, 0.2 s in 2 s (10 %), suits unprivileged processes, whose
    /// windows the kernel requires to be a multiple of 2 s.
    public struct Trigger: Sendable, Hashable {
        /// Seconds of stall within `window` that fire the trigger. Default 0.2.
        public var stall: Double
        /// The window in seconds, 0.5...10 (a multiple of 2 without privileges). Default 2.
        public var window: Double

        public init(stall: Double = 0.2, window: Double = 2) {
            self.stall = stall
            self.window = window
        }

        func validate() throws {
            guard (0.5...10).contains(window), stall > 0, stall <= window else {
                throw KVCacheError.invalidArgument(
                    "a PSI trigger needs a window in 0.5...10 s and a stall in (0, window], not \(stall) in \(window)")
            }
        }

        /// What to write to the PSI file, e.g. `some 200000 2000000` (microseconds).
        var command: String {
            "some \(Int((stall * 1_000_000).rounded())) \(Int((window * 1_000_000).rounded()))"
        }
    }
}

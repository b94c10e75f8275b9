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
        /// The time between reads of the PSI file. Default 1 second.
        public var pollInterval: Duration
        /// The time after which pressure that stays at the same level trims again.
        /// Default 10 seconds, the window of `avg10`, so each trim sees fresh figures.
        public var retrimInterval: Duration
        /// The fraction of their contents caches keep on `.warning`. Default 0.5.
        public var warningTrimFraction: Double
        /// The fraction of their contents caches keep on `.critical`. Default 0 (empty them).
        public var criticalTrimFraction: Double
        /// A kernel PSI trigger that wakes the monitor as soon as stalls exceed it,
        /// between reads; `nil` to rely on reads alone. When the kernel refuses
        /// the trigger (no permission, no support) the monitor reads only.
        public var trigger: Trigger?

        /// Creates a configuration; every parameter has the default documented on its property.
        /// ``MemoryPressureMonitor/init(configuration:)`` rejects values out of range.
        public init(
            pressureFile: String? = nil,
            warningThreshold: Double = 10,
            criticalThreshold: Double = 5,
            pollInterval: Duration = .seconds(1),
            retrimInterval: Duration = .seconds(10),
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
            try Validation.checkFraction(warningTrimFraction, "warningTrimFraction")
            try Validation.checkFraction(criticalTrimFraction, "criticalTrimFraction")
            guard pollInterval > .zero else {
                throw KVCacheError.invalidArgument("pollInterval must be positive, not \(pollInterval)")
            }
            guard retrimInterval >= .zero else {
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
    /// in total within any `window` (PSI `some`).
    ///
    /// The default, 0.2 s in 2 s (10 %), suits unprivileged processes, whose
    /// windows the kernel requires to be a multiple of 2 s.
    public struct Trigger: Sendable, Hashable {
        /// The stall within `window` that fires the trigger. Default 200 ms.
        public var stall: Duration
        /// The window, 0.5...10 seconds (a multiple of 2 seconds without privileges). Default 2 seconds.
        public var window: Duration

        /// Creates a trigger; the defaults are documented on the properties.
        public init(stall: Duration = .milliseconds(200), window: Duration = .seconds(2)) {
            self.stall = stall
            self.window = window
        }

        func validate() throws {
            guard (Duration.milliseconds(500)...Duration.seconds(10)).contains(window), stall > .zero, stall <= window else {
                throw KVCacheError.invalidArgument(
                    "a PSI trigger needs a window in 0.5...10 s and a stall in (0, window], not \(stall) in \(window)")
            }
        }

        /// What to write to the PSI file, e.g. `some 200000 2000000` (microseconds).
        var command: String {
            "some \(Int((stall.seconds * 1_000_000).rounded())) \(Int((window.seconds * 1_000_000).rounded()))"
        }
    }
}

#if Metrics
import Dispatch

extension MemoryCache {
    /// Exports the statistics now (package trait `Metrics`; they are also exported every
    /// `Configuration.metricsInterval` and at close). Does nothing without a `metricsLabel`.
    public func reportMetrics() {
        guard let metrics else { return }
        metrics.report(statistics)
    }

    /// A suspended timer on a queue of its own that fires every `seconds`; the caller sets its
    /// handler (holding the cache weakly, so the timer never keeps it alive) and resumes it.
    static func startTimer(every seconds: Double, label: String) -> DispatchSourceTimer {
        let timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: label, qos: .utility))
        let nanoseconds = Int(min(seconds, 1e6) * 1e9)
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds),
                       leeway: .nanoseconds(nanoseconds / 10))
        return timer
    }
}
#endif

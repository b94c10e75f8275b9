/// Adapts the share of the cache given to the recency window (Caffeine's hill
/// climber): over each sample of requests it measures the hit rate, and steps the
/// window in the direction that raised it, reversing when the rate fell. Steps decay
/// as the rate settles; a large change in the rate (a new workload) restores them.
/// Used without a count limit only; under one, `WindowGradient` moves the window.
@usableFromInline
struct WindowClimber {
    /// A step in each limit: entries and cost.
    @usableFromInline
    struct Step: Equatable {
        @usableFromInline var count: Double
        @usableFromInline var cost: Double

        @usableFromInline
        init(count: Double, cost: Double) {
            self.count = count
            self.cost = cost
        }

        static func * (step: Step, factor: Double) -> Step {
            Step(count: step.count * factor, cost: step.cost * factor)
        }
    }

    /// The first step, as a share of each limit.
    static let stepShare = 0.0625
    /// What each step is multiplied by while the hit rate settles.
    static let decay = 0.98
    /// A change of the hit rate that restores the first step's size.
    static let restartThreshold = 0.05
    /// A sample lasts this many times the cache's capacity in requests.
    @usableFromInline static let samplePeriod = 10

    private let initialStep: Step
    /// The next step's size...
    private var step: Step
    /// ...and direction: 1 grows the window, -1 shrinks it.
    private var direction = 1.0
    @usableFromInline var hits = 0
    @usableFromInline var requests = 0
    private var previousRate: Double?

    /// A climber for a cache of `capacity` entries and cost (0 where a limit is off).
    init(capacity: Step) {
        initialStep = capacity * Self.stepShare
        step = initialStep
    }

    /// Records a request; at the end of a sample of `sampleSize` requests, returns
    /// how much the window should grow (negative: shrink).
    @inlinable
    mutating func record(hit: Bool, sampleSize: Int) -> Step? {
        if hit { hits &+= 1 }
        requests &+= 1
        guard requests >= sampleSize else { return nil }
        return endSample()
    }

    /// Compares the sample's hit rate with the previous one's and chooses the step.
    @usableFromInline
    mutating func endSample() -> Step {
        let rate = Double(hits) / Double(requests)
        hits = 0
        requests = 0
        guard let previousRate else {
            // The first sample has nothing to compare with: take a step to have something.
            self.previousRate = rate
            return step
        }
        self.previousRate = rate
        let change = rate - previousRate
        if change < 0 { direction = -direction }
        step = step * Self.decay
        if abs(change) >= Self.restartThreshold { step = initialStep }
        return step * direction
    }
}

import Testing
@testable import KVCache

/// The commit timer's decisions: it arms once, leaves the work to callers that
/// are still calling, and acts only once they are quiet past the deadline.
@Suite struct CommitScheduleTests {
    @Test func theTimerIsArmedOnceForTheFirstDeadline() {
        let schedule = CommitSchedule(quietPeriod: 0.5)
        #expect(schedule.update(deadline: nil, now: 0) == nil)
        #expect(schedule.update(deadline: 10, now: 1) == 10)
        #expect(schedule.update(deadline: 12, now: 2) == nil)
    }

    @Test func aTimerBeforeTheDeadlineFiresAgainAtIt() {
        let schedule = CommitSchedule(quietPeriod: 0.5)
        _ = schedule.update(deadline: 10, now: 1)
        #expect(schedule.timerFired(at: 5) == .rearm(10))
    }

    @Test func whileCallersKeepCallingTheTimerLeavesTheWorkToThem() {
        let schedule = CommitSchedule(quietPeriod: 0.5)
        _ = schedule.update(deadline: 10, now: 1)
        _ = schedule.update(deadline: 10, now: 9.9)
        #expect(schedule.timerFired(at: 10) == .rearm(10.4))
        // A caller started the commit and moved the deadline on.
        _ = schedule.update(deadline: 12, now: 10.2)
        #expect(schedule.timerFired(at: 10.4) == .rearm(12))
    }

    @Test func onceCallersAreQuietPastTheDeadlineTheTimerActsAndDisarms() {
        let schedule = CommitSchedule(quietPeriod: 0.5)
        _ = schedule.update(deadline: 10, now: 9)
        #expect(schedule.timerFired(at: 10) == .due)
        // Disarmed: the next deadline arms it again.
        #expect(schedule.update(deadline: 12, now: 10.1) == 12)
    }

    @Test func withNothingDueTheTimerStops() {
        let schedule = CommitSchedule(quietPeriod: 0.5)
        _ = schedule.update(deadline: 10, now: 1)
        _ = schedule.update(deadline: nil, now: 2)
        #expect(schedule.timerFired(at: 10) == .idle)
        #expect(schedule.update(deadline: 20, now: 11) == 20)
    }
}

import Testing

/// The trait that moves the blocking suites off the cooperative pool does move them.
@Suite(.onItsOwnThread) struct OwnThreadTests {
    @Test func aSynchronousTestRunsOnItsOwnThread() {
        #expect(ThreadExecutor.isCurrentThreadOne)
    }

    @Test func anAsynchronousTestStaysThereAcrossSuspensionsAndInItsChildTasks() async {
        #expect(ThreadExecutor.isCurrentThreadOne)
        await Task.yield()
        #expect(ThreadExecutor.isCurrentThreadOne)
        async let child = ThreadExecutor.isCurrentThreadOne
        #expect(await child)
    }

    @Test(arguments: 0..<4) func eachCaseRunsOnItsOwnThread(_: Int) {
        #expect(ThreadExecutor.isCurrentThreadOne)
    }
}

@Suite struct WithoutOwnThreadTests {
    @Test func aTestWithoutTheTraitRunsOnThePool() async {
        #expect(!ThreadExecutor.isCurrentThreadOne)
    }
}

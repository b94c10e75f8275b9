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

/// The limit on blocking tests admits that many at once and queues the rest, in order.
@Suite struct ConcurrencyLimitTests {
    @Test func aLimitOfTwoAdmitsTwoAndTheThirdWhenOneLeaves() async {
        let limit = ConcurrencyLimit(2)
        await limit.acquire()
        await limit.acquire()
        #expect(limit.available == 0)
        let (enteredStream, entered) = AsyncStream<Int>.makeStream()
        let third = Task {
            await limit.acquire()
            entered.yield(3)
        }
        entered.yield(0)  // the third is still waiting: nothing of it comes before this
        limit.release()
        await third.value
        var order: [Int] = []
        entered.finish()
        for await value in enteredStream { order.append(value) }
        #expect(order == [0, 3])
        // The released slot went to the third, not back to the pool of free ones.
        #expect(limit.available == 0)
        limit.release()
        limit.release()
        #expect(limit.available == 2)
    }
}

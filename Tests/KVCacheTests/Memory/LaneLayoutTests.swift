import Foundation
import Testing
@testable import KVCache

/// The read lanes' layout comes from the platform's mutex and cache line, never from
/// constants: glibc's mutex is 40 bytes on x86-64 and 48 on arm64, Darwin's 64.
@Suite struct LaneLayoutTests {
    @Test(arguments: [24, 40, 48, 64], [8, 16])
    func everyMutexSizeGivesASoundLayout(mutexSize: Int, mutexAlignment: Int) {
        for lineSize in [32, 64, 128] {
            let layout = LaneLayout(fields: LaneFields(mutexSize: mutexSize, bufferCapacity: 32),
                                    mutexAlignment: mutexAlignment, lineSize: lineSize)
            #expect(layout.violations(lanes: 64, stripes: 16) == [], "mutex \(mutexSize), line \(lineSize)")
            // The fields follow the mutex, and the buffer holds every read.
            #expect(layout.fields.bufferedOffset >= mutexSize)
            #expect(layout.stripeStride >= layout.fields.bufferOffset + 32 * 8)
            #expect(layout.fields.stampsOffset >= layout.fields.bufferOffset + 32 * 8)
            #expect(layout.stripeStride >= layout.fields.stampsOffset + 32 * 2)
        }
    }

    @Test func thePlatformsLayoutIsSoundAndUsed() {
        let layout = LaneLayout.platform
        #expect(layout.fields.mutexSize == MemoryLayout<pthread_mutex_t>.size)
        #expect(layout.violations(lanes: ReadLanes.countForStripedTable, stripes: 16) == [])
        let lanes = ReadLanes(count: 4, stripeCount: 16, readsSkipCacheLock: true)
        #expect(lanes.stripeStride == layout.stripeStride)
        #expect(lanes.laneStride == layout.laneStride(stripes: 16))
        #expect(Int(bitPattern: lanes.memory) % layout.alignment == 0)
    }

    /// The checks find what is wrong: a layout whose fields overlap the mutex fails.
    @Test func aBrokenLayoutIsReported() {
        let layout = LaneLayout(fields: LaneFields(mutexSize: 40, bufferCapacity: 32), mutexAlignment: 8, lineSize: 48)
        #expect(!layout.violations(lanes: 2, stripes: 16).isEmpty)
    }

    /// Four lanes per processor (so threads that outnumber cores rarely share one), a power
    /// of two, at most 64.
    @Test func lanesScaleWithProcessorsUpToSixtyFour() {
        let count = ReadLanes.countForStripedTable
        let wanted = min(ProcessInfo.processInfo.activeProcessorCount * ReadLanes.lanesPerProcessor, 64)
        #expect(count >= wanted && count < 2 * wanted && count <= 64 && count & (count - 1) == 0)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where the fields of the read lanes' memory live, derived from the platform's
/// mutex (size and alignment) and cache line: glibc's `pthread_mutex_t` takes 40 bytes
/// on x86-64, 48 on arm64 and Darwin's 64, and lines are 64 or 128 bytes.
///
/// A lane's part of a stripe (`LaneStripe`) is the mutex, then the buffered reads'
/// count, the skip flag, hits, misses, drops, replacements, and the waits for the lock
/// (count, nanoseconds) and in-place writes' time (measured only when asked), then the read buffer and
/// its reads' stamps (`LaneStripe.stamps`); parts are
/// `stripeStride` apart. A lane (`ReadLanes`) is a header line (`LaneHeader`), then its
/// parts; lanes are `laneStride` apart, so no two lanes share a line.
struct LaneLayout: Equatable, Sendable {
    let fields: LaneFields
    let mutexAlignment: Int
    let lineSize: Int

    init(fields: LaneFields, mutexAlignment: Int, lineSize: Int) {
        self.fields = fields
        self.mutexAlignment = mutexAlignment
        self.lineSize = lineSize
    }

    /// This platform's layout: its mutex and its level-1 data cache line.
    static var platform: LaneLayout {
        LaneLayout(fields: .platform, mutexAlignment: MemoryLayout<pthread_mutex_t>.alignment, lineSize: platformLineSize)
    }

    /// The level-1 data cache line the system reports, or 128 bytes (the largest in
    /// common use, Apple silicon's) where it reports none.
    static let platformLineSize: Int = {
        #if canImport(Glibc)
        let reported = sysconf(Int32(_SC_LEVEL1_DCACHE_LINESIZE))
        if reported >= 16, reported <= 4_096, reported & (reported - 1) == 0 { return reported }
        #endif
        return 128
    }()

    /// Where the next part starts: whole lines, so each part starts where a mutex may.
    var stripeStride: Int {
        LaneFields.roundUp(fields.stampsOffset + fields.bufferCapacity * 2, to: alignment)
    }
    /// A lane's header: whole lines, ahead of its parts.
    var headerStride: Int { LaneFields.roundUp(LaneHeader.byteCount, to: alignment) }
    /// The alignment of the allocation, of every lane and of every part.
    var alignment: Int { Swift.max(lineSize, mutexAlignment, 8) }

    /// Bytes from one lane's first part to the next lane's, for `stripes` parts a lane.
    func laneStride(stripes: Int) -> Int { headerStride + stripes * stripeStride }

    /// What is wrong with this layout, for `lanes` lanes of `stripes` parts: fields that
    /// overlap or leave their part, misaligned fields, lanes that share a line. Empty
    /// when it is sound.
    func violations(lanes: Int, stripes: Int) -> [String] {
        var found: [String] = []
        let mutexSize = fields.mutexSize, bufferCapacity = fields.bufferCapacity
        guard mutexSize > 0, mutexAlignment > 0, mutexAlignment & (mutexAlignment - 1) == 0,
              lineSize > 0, lineSize & (lineSize - 1) == 0, bufferCapacity > 0 else {
            return ["unusable inputs \(self)"]
        }
        let fields: [(String, Int, Int, Int)] = [
            ("mutex", 0, mutexSize, mutexAlignment),
            ("buffered", fields.bufferedOffset, 4, 4),
            ("skipsCacheLock", fields.skipsCacheLockOffset, 4, 4),
            ("hits", fields.hitsOffset, 8, 8),
            ("misses", fields.missesOffset, 8, 8),
            ("dropped", fields.droppedOffset, 8, 8),
            ("replacements", fields.replacementsOffset, 8, 8),
            ("waits", fields.waitsOffset, 8, 8),
            ("waitNanoseconds", fields.waitNanosecondsOffset, 8, 8),
            ("writeNanoseconds", fields.writeNanosecondsOffset, 8, 8),
            ("buffer", fields.bufferOffset, bufferCapacity * 8, 8),
            ("stamps", fields.stampsOffset, bufferCapacity * 2, 2),
        ]
        for (index, (name, offset, size, fieldAlignment)) in fields.enumerated() {
            if offset % fieldAlignment != 0 { found.append("\(name) at \(offset) is not \(fieldAlignment)-aligned") }
            if offset + size > stripeStride { found.append("\(name) leaves its part (\(offset)+\(size) > \(stripeStride))") }
            for (other, otherOffset, otherSize, _) in fields[(index + 1)...] where offset < otherOffset + otherSize && otherOffset < offset + size {
                found.append("\(name) overlaps \(other)")
            }
        }
        if stripeStride % alignment != 0 { found.append("parts are not \(alignment) bytes apart") }
        if headerStride < LaneHeader.byteCount || headerStride % alignment != 0 { found.append("the header is not whole lines") }
        let stride = laneStride(stripes: stripes)
        if stride % lineSize != 0 { found.append("lanes \(stride) bytes apart share a line") }
        // Every part's mutex of every lane starts aligned (the allocation is `alignment`-aligned).
        for lane in 0..<lanes {
            for stripe in 0..<stripes {
                let start = headerStride + lane * stride + stripe * stripeStride
                if start % mutexAlignment != 0 { found.append("lane \(lane) stripe \(stripe)'s mutex is misaligned") }
            }
        }
        return found
    }
}

/// The offsets of the fields of a lane's part of a stripe, from the mutex's size alone
/// (so that, for the platform's mutex, they are constants the compiler folds).
@usableFromInline
struct LaneFields: Equatable, Sendable {
    @usableFromInline let mutexSize: Int
    @usableFromInline let bufferCapacity: Int

    @inlinable
    init(mutexSize: Int, bufferCapacity: Int) {
        self.mutexSize = mutexSize
        self.bufferCapacity = bufferCapacity
    }

    /// The platform mutex's fields, with 32 reads a buffer.
    @inlinable
    static var platform: LaneFields { LaneFields(mutexSize: MemoryLayout<pthread_mutex_t>.size, bufferCapacity: 32) }

    @inlinable
    static func roundUp(_ value: Int, to alignment: Int) -> Int {
        (value + alignment - 1) / alignment * alignment
    }

    // In bytes from the part's start, where the mutex is.
    @inlinable var bufferedOffset: Int { Self.roundUp(mutexSize, to: 4) }
    @inlinable var skipsCacheLockOffset: Int { bufferedOffset + 4 }
    @inlinable var hitsOffset: Int { Self.roundUp(skipsCacheLockOffset + 4, to: 8) }
    @inlinable var missesOffset: Int { hitsOffset + 8 }
    @inlinable var droppedOffset: Int { missesOffset + 8 }
    @inlinable var replacementsOffset: Int { droppedOffset + 8 }
    @inlinable var waitsOffset: Int { replacementsOffset + 8 }
    @inlinable var waitNanosecondsOffset: Int { waitsOffset + 8 }
    @inlinable var writeNanosecondsOffset: Int { waitNanosecondsOffset + 8 }
    @inlinable var bufferOffset: Int { writeNanosecondsOffset + 8 }
    @inlinable var stampsOffset: Int { bufferOffset + bufferCapacity * 8 }
}

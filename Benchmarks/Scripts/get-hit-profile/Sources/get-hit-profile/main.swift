// Get hits on 100,000 ~30-byte String keys, and nothing else, for `perf`:
//
//   cd Benchmarks/Scripts/get-hit-profile && swift build -c release
//   .build/release/get-hit-profile adaptive|lru|floor [zipf] [fresh [warm]] [threads N] [rounds R]
//   perf record -g .build/release/get-hit-profile adaptive zipf
//   ./interleave.sh 5 adaptive fresh          (floor and cache alternated, with ratios)
//   ./instructions-per-get.py [--misses] adaptive zipf   (callgrind: instructions, cache misses per get)
//
// `fresh` times one pass over a newly filled cache per round, as kvcache-bench memory
// does (every hit then promotes an entry from probation); without it, one cache is
// read `rounds` times. `warm` (with `fresh`) first has every thread look up its slice's keys
// with `contains`, untimed, which reads the table and the keys without telling the policy:
// then the timed pass does not start with the other cores' caches cold.
//
// It prints ns per get (wall time over all threads' gets). The cache is bounded at
// exactly its key count, as in `kvcache-bench memory`, so every get hits. Its figures
// are for finding where time goes; the ratios to quote come from kvcache-bench.
import Foundation
import KVCache

/// A value with no reference count: a hit that retained a class instance would write
/// its count, a line shared by every thread reading that key (as in kvcache-bench).
struct SmallValue: Sendable {
    let number: Int
    init(_ number: Int) { self.number = number }
}

/// The Dictionary+mutex floor of `kvcache-bench memory`.
final class Floor: @unchecked Sendable {
    private let lock = NSLock()
    private var table: [String: SmallValue] = [:]

    func set(_ value: SmallValue, forKey key: String) {
        lock.lock()
        table[key] = value
        lock.unlock()
    }

    func value(forKey key: String) -> SmallValue? {
        lock.lock()
        defer { lock.unlock() }
        return table[key]
    }
}

/// The command line: mode, then `zipf`, `threads N`, `rounds R` in any order.
func parse() -> (mode: String, zipf: Bool, fresh: Bool, warm: Bool, threads: Int, rounds: Int) {
    var arguments = CommandLine.arguments.dropFirst()
    let mode = arguments.popFirst() ?? "adaptive"
    var (zipf, fresh, warm, threads, rounds) = (false, false, false, 1, 30)
    while let argument = arguments.popFirst() {
        switch argument {
        case "zipf": zipf = true
        case "fresh": fresh = true
        case "warm": warm = true
        case "threads": threads = max(1, Int(arguments.popFirst() ?? "") ?? 1)
        case "rounds": rounds = max(1, Int(arguments.popFirst() ?? "") ?? 30)
        default: fatalError("unknown argument \(argument)")
        }
    }
    return (mode, zipf, fresh, warm, threads, rounds)
}

let (mode, zipf, fresh, warm, threads, rounds) = parse()
guard ["adaptive", "lru", "floor"].contains(mode) else { fatalError("mode: adaptive, lru or floor") }

let keyCount = 100_000
let keys = (0..<keyCount).map { "https://example.com/item/\($0)/x" }
/// The keys' order: uniform, or Zipf(0.9) by inverting the cumulative weights.
let order: [Int] = {
    // A fixed seed (kvcache-bench's SplitMix64, Random.swift is a link to its file): the same
    // order in every run, so that callgrind's counts of two runs differ only by the code.
    var generator = SplitMix64(seed: 0x9E37_79B9_7F4A_7C15)
    guard zipf else { return (0..<keyCount).map { _ in Int.random(in: 0..<keyCount, using: &generator) } }
    var cumulative: [Double] = []
    var total = 0.0
    for rank in 1...keyCount {
        total += 1 / pow(Double(rank), 0.9)
        cumulative.append(total)
    }
    return (0..<keyCount).map { _ in
        let point = Double.random(in: 0..<total, using: &generator)
        var low = 0, high = keyCount - 1
        while low < high {
            let middle = (low + high) / 2
            if cumulative[middle] < point { low = middle + 1 } else { high = middle }
        }
        return low
    }
}()

/// What the threads read, a filled cache or the floor, with its get and a look-up that
/// does not count as a read (it answers with `present` for a key the cache holds). The
/// loops are generic over it, so each is specialized: a get through a closure retained
/// the closure's context, one object for every thread, on every call.
protocol Target: AnyObject, Sendable {
    init()
    func get(_ key: String) -> SmallValue?
    func touch(_ key: String) -> SmallValue?
}

final class FloorTarget: Target {
    let floor = Floor()
    init() { for (index, key) in keys.enumerated() { floor.set(SmallValue(index), forKey: key) } }
    func get(_ key: String) -> SmallValue? { floor.value(forKey: key) }
    func touch(_ key: String) -> SmallValue? { floor.value(forKey: key) }
}

final class CacheTarget: Target {
    let cache = try! MemoryCache<String, SmallValue>(
        configuration: .init(countLimit: keyCount, policy: mode == "lru" ? .lru : .adaptive))
    init() { for (index, key) in keys.enumerated() { cache.setValue(SmallValue(index), forKey: key) } }
    func get(_ key: String) -> SmallValue? { cache.value(forKey: key) }
    func touch(_ key: String) -> SmallValue? { cache.contains(key) ? present : nil }
}

let present = SmallValue(-1)

/// Each thread's own copies of the keys: shared key strings would be retained and released
/// by every thread on every get (kvcache-bench's workers look up by copies of their own too).
let workerKeys = (0..<threads).map { _ in keys.map { String(decoding: Array($0.utf8), as: UTF8.self) } }

/// Seconds for `passes` passes of every thread over its slice of `order`, by `get` (or
/// by `touch`).
func timedGets<T: Target>(_ target: T, touch: Bool = false, passes: Int) -> Double {
    let start = Date()
    let done = DispatchGroup()
    for worker in 0..<threads {
        done.enter()
        Thread.detachNewThread {
            let slice = order[(worker * keyCount / threads)..<((worker + 1) * keyCount / threads)]
            let keys = workerKeys[worker]
            var hits = 0
            for _ in 0..<passes {
                if touch {
                    for index in slice where target.touch(keys[index]) != nil { hits += 1 }
                } else {
                    for index in slice where target.get(keys[index]) != nil { hits += 1 }
                }
            }
            precondition(hits == passes * slice.count, "every get must hit")
            done.leave()
        }
    }
    done.wait()
    return Date().timeIntervalSince(start)
}

/// Seconds for every timed pass: `fresh`, a new, filled target before each pass, as
/// kvcache-bench's one pass after its fill; else `rounds` passes over one.
func run<T: Target>(_: T.Type) -> Double {
    guard fresh else { return timedGets(T(), passes: rounds) }
    var seconds = 0.0
    for _ in 0..<rounds {
        let target = T()
        if warm { _ = timedGets(target, touch: true, passes: 1) }
        seconds += timedGets(target, passes: 1)
    }
    return seconds
}

let seconds = mode == "floor" ? run(FloorTarget.self) : run(CacheTarget.self)
let nanoseconds = seconds * 1e9 / Double(rounds * keyCount)
print(mode, zipf ? "zipf" : "uniform", fresh ? (warm ? "fresh warm" : "fresh") : "", "threads \(threads)", String(format: "%.1f ns/get", nanoseconds))

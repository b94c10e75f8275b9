import KVCacheTestSupport
import Foundation
import KVCache

/// Writes in a loop until it is killed: sets of inline and file values, removes,
/// reads (checked), flushes, trims and the odd removeAll, over a small key space
/// so keys are overwritten often.
///
/// Protocol: `ready` once the cache is open; before each mutation an intent line
/// `w <seq> S <key>` (set), `w <seq> R <key>` (remove), `w <seq> T` (trim) or
/// `w <seq> A` (removeAll); after each `flush()` returns, `F <seq>`. Any error or
/// a damaged read ends the process with `E <message>`. The parent knows from
/// the intents every value that may exist, and from the flushes which must.
struct CrashWriter {
    static let keyCount = 48
    static let trimCount = 20

    let directory: URL
    let seed: UInt64
    let firstSeq: UInt64

    func run() -> Never {
        let cache = openCacheAndReport(at: directory)
        var random = SeededGenerator(seed: seed)
        var seq = firstSeq
        while true {
            seq += 1
            let key = "k\(Int.random(in: 0..<Self.keyCount, using: &random))"
            let roll = Int.random(in: 0..<1000, using: &random)
            do {
                switch roll {
                case 0..<450:
                    let size = Int.random(in: CheckedValue.minimumSize(forKey: key)...4000, using: &random)
                    WorkerOutput.line("w \(seq) S \(key)")
                    try cache.setValue(CheckedValue.make(key: key, seq: seq, size: size), forKey: key)
                case 450..<600:
                    let size = Int.random(in: 20 * 1024...90_000, using: &random)
                    WorkerOutput.line("w \(seq) S \(key)")
                    try cache.setValue(CheckedValue.make(key: key, seq: seq, size: size), forKey: key)
                case 600..<780:
                    WorkerOutput.line("w \(seq) R \(key)")
                    try cache.removeValue(forKey: key)
                case 780..<960:
                    if let data = try cache.value(forKey: key), CheckedValue.seq(of: data, key: key) == nil {
                        Output.fail("damaged value read for \(key): \(data.count) bytes")
                    }
                case 960..<992:
                    try cache.flush()
                    WorkerOutput.line("F \(seq)")
                case 992..<998:
                    WorkerOutput.line("w \(seq) T")
                    try cache.trim(toCount: Self.trimCount)
                default:
                    WorkerOutput.line("w \(seq) A")
                    try cache.removeAll()
                }
            } catch {
                Output.fail("\(error)")
            }
        }
    }
}

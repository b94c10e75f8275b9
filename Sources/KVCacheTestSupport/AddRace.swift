import Foundation

/// The keys and values of the `setValueIfAbsent` race between processes (the test worker's
/// `add-racer` command and the test that drives it): each thread of each process offers a
/// value of its own for every key, so the value stored names the caller that stored it.
public enum AddRace {
    /// The key of index `index`.
    public static func key(_ index: Int) -> String { "add\(index)" }

    /// The value that `thread` of `process` offers for key `index`: a `CheckedValue` whose
    /// sequence number names the caller. Every 20th key's value is large enough to be stored
    /// in a file (over the default inline threshold of 20 KB), the others inline.
    public static func value(forKey index: Int, process: Int, thread: Int) -> Data {
        CheckedValue.make(key: key(index), seq: UInt64(process) << 32 | UInt64(thread),
                          size: index % 20 == 0 ? 30_000 : 100)
    }

    /// The caller whose value `data` is, if it is an intact value of key `index`.
    public static func writer(of data: Data, forKey index: Int) -> (process: Int, thread: Int)? {
        guard let seq = CheckedValue.seq(of: data, key: key(index)) else { return nil }
        return (Int(seq >> 32), Int(seq & 0xFFFF_FFFF))
    }
}

import Foundation
import KVCache

// The child process of the crash and multi-process tests (Tests/KVCacheTests/Reliability).
// It talks to its parent through stdout lines (see each command for its protocol).
//
//   KVCacheTestWorker crash-writer <directory> <seed> <first sequence number>
//   KVCacheTestWorker multi-writer <directory> <worker id> <threads> <milliseconds> <seed> <chaos 0|1>
//   KVCacheTestWorker release-after-trim <directory> <entries>
//   KVCacheTestWorker open-together <directory>   (opens when its stdin reaches end of file)
//   KVCacheTestWorker add-racer <directory> <process id> <threads> <keys> <disk|cache>

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { Output.fail("usage: KVCacheTestWorker <command> <arguments...>") }

switch arguments[1] {
case "crash-writer" where arguments.count == 5:
    guard let seed = UInt64(arguments[3]), let first = UInt64(arguments[4]) else { Output.fail("bad arguments") }
    CrashWriter(directory: URL(fileURLWithPath: arguments[2]), seed: seed, firstSeq: first).run()
case "multi-writer" where arguments.count == 8:
    guard let id = Int(arguments[3]), let threads = Int(arguments[4]), let milliseconds = Int(arguments[5]),
          let seed = UInt64(arguments[6]) else { Output.fail("bad arguments") }
    MultiWriter(directory: URL(fileURLWithPath: arguments[2]), id: id, threads: threads,
                milliseconds: milliseconds, seed: seed, chaos: arguments[7] == "1").run()
case "release-after-trim" where arguments.count == 4:
    guard let entries = Int(arguments[3]), entries > 0 else { Output.fail("bad arguments") }
    ReleaseAfterTrim(directory: URL(fileURLWithPath: arguments[2]), entries: entries).run()
case "open-together" where arguments.count == 3:
    OpenTogether(directory: URL(fileURLWithPath: arguments[2])).run()
case "add-racer" where arguments.count == 7 && ["disk", "cache"].contains(arguments[6]):
    guard let id = Int(arguments[3]), let threads = Int(arguments[4]), let keys = Int(arguments[5]) else {
        Output.fail("bad arguments")
    }
    AddRacer(directory: URL(fileURLWithPath: arguments[2]), process: id, threads: threads, keys: keys,
             throughFacade: arguments[6] == "cache").run()
default:
    Output.fail("unknown command or wrong arguments: \(arguments.dropFirst().joined(separator: " "))")
}

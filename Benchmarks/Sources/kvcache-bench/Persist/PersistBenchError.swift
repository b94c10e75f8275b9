/// A request of the persist benchmark that did not answer as a cached GET does.
enum PersistBenchError: Error, CustomStringConvertible {
    case unexpectedStatus(Int)

    var description: String {
        switch self {
        case .unexpectedStatus(let code): return "a cached GET answered HTTP \(code), not 200"
        }
    }
}

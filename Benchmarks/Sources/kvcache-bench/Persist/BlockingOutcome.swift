import Synchronization

/// The outcome of async work a synchronous command waits for.
final class BlockingOutcome<Value: Sendable>: Sendable {
    let result = Mutex<Result<Value, any Error>?>(nil)
}

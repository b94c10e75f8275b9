import Dispatch

/// Drops references on a background queue, so the caller never pays for
/// deinitializing evicted values.
@usableFromInline
struct BackgroundReleaser: Sendable {
    private let queue: DispatchQueue

    init(label: String) {
        queue = DispatchQueue(label: label, qos: .utility)
    }

    /// Releases `item` on the background queue.
    ///
    /// The item is moved into a parcel that only the queue empties, so the last
    /// reference is always dropped there, whichever thread finishes first.
    @usableFromInline
    func release<T>(_ item: consuming T) {
        let parcel = Parcel(consume item)
        queue.async { parcel.empty() }
    }

    /// Blocks until everything handed over so far has been released.
    func waitUntilIdle() {
        queue.sync {}
    }
}

/// Holds one reference until the background queue drops it.
private final class Parcel<T>: @unchecked Sendable {
    // Written once by `init` on the sender, then only by the queue.
    private var contents: T?

    init(_ contents: consuming T) {
        self.contents = consume contents
    }

    func empty() {
        contents = nil
    }
}

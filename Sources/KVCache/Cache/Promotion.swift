import Foundation

/// What promoting a disk or remote hit into the levels above needs besides the value.
@usableFromInline
struct Promotion {
    @usableFromInline var cost: Int64 = 0
    /// The disk entry's, so the memory copy does not outlive it.
    @usableFromInline var expiration: Expiration = .never
    /// The bytes of a remote hit, which the promotion also writes to disk; nil for a disk hit.
    @usableFromInline var remoteData: Data?

    @usableFromInline init() {}
}

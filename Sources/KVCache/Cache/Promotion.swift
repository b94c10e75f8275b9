import Foundation

/// What promoting a disk hit into memory needs besides the value.
@usableFromInline
struct Promotion {
    @usableFromInline var cost: Int64 = 0
    /// The disk entry's, so the memory copy does not outlive it.
    @usableFromInline var expiration: Expiration = .never

    @usableFromInline init() {}
}

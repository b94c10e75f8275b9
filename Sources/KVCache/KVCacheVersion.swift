/// The version of this build of KVCache (semantic versioning; see CHANGELOG.md).
public enum KVCacheVersion {
    /// For example "1.0.0", or "1.0.0-dev" before that version is released.
    public static let string = "1.0.0-dev"
}

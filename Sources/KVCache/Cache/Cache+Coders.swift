import Foundation

extension Cache where Value == Data {
    /// Opens the cache `name` in `baseDirectory/name/` for raw bytes, stored untouched.
    public convenience init(name: String, baseDirectory: URL, configuration: Configuration = .init()) throws {
        try self.init(name: name, baseDirectory: baseDirectory, coder: DataCoder(), configuration: configuration)
    }

    /// Opens the cache in `directory` for raw bytes, stored untouched.
    public convenience init(directory: URL, configuration: Configuration = .init()) throws {
        try self.init(directory: directory, coder: DataCoder(), configuration: configuration)
    }
}

extension Cache where Value: Codable {
    /// Opens the cache `name` in `baseDirectory/name/` for `Codable` values, stored as JSON.
    public convenience init(name: String, baseDirectory: URL, configuration: Configuration = .init()) throws {
        try self.init(name: name, baseDirectory: baseDirectory, coder: JSONCoder<Value>(), configuration: configuration)
    }

    /// Opens the cache in `directory` for `Codable` values, stored as JSON.
    public convenience init(directory: URL, configuration: Configuration = .init()) throws {
        try self.init(directory: directory, coder: JSONCoder<Value>(), configuration: configuration)
    }
}

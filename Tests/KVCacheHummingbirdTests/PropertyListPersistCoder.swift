#if Hummingbird
import Foundation
import KVCacheHummingbird

/// A coder other than the default, as a user would write one: binary property lists.
struct PropertyListPersistCoder: PersistValueCoder {
    func encode<Object: Encodable>(_ value: Object) throws -> Data {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        return try encoder.encode(value)
    }

    func decode<Object: Decodable>(_ type: Object.Type, from data: Data) throws -> Object {
        try PropertyListDecoder().decode(type, from: data)
    }
}
#endif

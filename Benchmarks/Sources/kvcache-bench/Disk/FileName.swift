import Crypto
import Foundation

/// File names the way SDWebImage and Kingfisher make them: the lowercase hex
/// MD5 digest of the key (swift-crypto's `Insecure.MD5`; CommonCrypto's
/// `CC_MD5` there).
enum FileName {
    private static let digits = Array("0123456789abcdef".utf8)

    static func md5(_ key: String) -> String {
        let digest = Insecure.MD5.hash(data: Data(key.utf8))
        return String(unsafeUninitializedCapacity: 2 * Insecure.MD5.byteCount) { buffer in
            var index = 0
            for byte in digest {
                buffer[index] = digits[Int(byte >> 4)]
                buffer[index + 1] = digits[Int(byte & 0x0F)]
                index += 2
            }
            return index
        }
    }
}

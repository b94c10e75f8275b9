#if HTTP
/// HTTP dates (RFC 9110 §5.6.7) as seconds since 1970: the IMF-fixdate form, and the two
/// obsolete forms a recipient must accept (RFC 850 and asctime). Anything else is invalid.
enum HTTPDate {
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    // Names are matched without case: a sender's "jan" or "gmt" is still unambiguous.
    private static let lowerMonths = months.map { $0.lowercased() }
    private static let lowerDays = Set(days.map { $0.lowercased() })
    private static let lowerLongDays: Set<String> = ["sunday", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday"]

    /// The date `string` names, or nil when it is not one of the three forms.
    static func parse(_ value: some StringProtocol) -> Double? {
        // Bounded: a hostile header must not cost more than a date's worth of work.
        guard value.utf8.count <= 64 else { return nil }
        let string = String(value).lowercased()
        // One space between parts; asctime pads a one-digit day with a second space.
        var parts = string.split(separator: " ", omittingEmptySubsequences: false)
        if parts.count == 6, parts[2].isEmpty, parts[3].count == 1 { parts.remove(at: 2) }
        guard !parts.contains(where: \.isEmpty) else { return nil }
        switch parts.count {
        case 6:  // Sun, 06 Nov 1994 08:49:37 GMT
            guard parts[0].count == 4, parts[0].hasSuffix(","), lowerDays.contains(String(parts[0].dropLast())),
                  parts[1].count == 2, parts[3].count == 4, parts[5] == "gmt",
                  let day = Int(parts[1]), let month = lowerMonths.firstIndex(of: String(parts[2])),
                  let year = Int(parts[3])
            else { return nil }
            return seconds(year: year, month: month + 1, day: day, time: parts[4])
        case 4:  // Sunday, 06-Nov-94 08:49:37 GMT
            let date = parts[1].split(separator: "-", omittingEmptySubsequences: false)
            guard parts[0].hasSuffix(","), lowerLongDays.contains(String(parts[0].dropLast())), parts[3] == "gmt",
                  date.count == 3, date[0].count == 2, date[2].count == 2,
                  let day = Int(date[0]), let month = lowerMonths.firstIndex(of: String(date[1])),
                  let shortYear = Int(date[2])
            else { return nil }
            // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
            let year = shortYear < 70 ? 2000 + shortYear : 1900 + shortYear
            return seconds(year: year, month: month + 1, day: day, time: parts[2])
        case 5:  // Sun Nov  6 08:49:37 1994
            guard lowerDays.contains(String(parts[0])), let month = lowerMonths.firstIndex(of: String(parts[1])),
                  parts[2].count <= 2, let day = Int(parts[2]), parts[4].count == 4, let year = Int(parts[4])
            else { return nil }
            return seconds(year: year, month: month + 1, day: day, time: parts[3])
        default:
            return nil
        }
    }

    /// `seconds` as an IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT").
    static func format(_ seconds: Double) -> String {
        let whole = Int64(seconds.rounded(.down))
        let dayNumber = whole >= 0 ? whole / 86_400 : (whole - 86_399) / 86_400
        let secondOfDay = Int(whole - dayNumber * 86_400)
        let (year, month, day) = civil(fromDays: dayNumber)
        let weekday = Int(((dayNumber % 7) + 11) % 7)  // 1970-01-01 was a Thursday.
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(days[weekday]), \(two(day)) \(months[month - 1]) \(year) "
            + "\(two(secondOfDay / 3600)):\(two(secondOfDay / 60 % 60)):\(two(secondOfDay % 60)) GMT"
    }

    private static func seconds(year: Int, month: Int, day: Int, time: Substring) -> Double? {
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
              let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
              (0...23).contains(hour), (0...59).contains(minute), (0...60).contains(second),
              (1...31).contains(day), (1...9999).contains(year)
        else { return nil }
        let dayNumber = days(fromCivil: year, month, day)
        return Double(dayNumber * 86_400 + Int64(hour * 3600 + minute * 60 + second))
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func days(fromCivil year: Int, _ month: Int, _ day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    private static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = Int(dayOfYear - (153 * mp + 2) / 5 + 1)
        let month = Int(mp < 10 ? mp + 3 : mp - 9)
        let year = Int(yearOfEra + era * 400) + (month <= 2 ? 1 : 0)
        return (year, month, day)
    }
}
#endif

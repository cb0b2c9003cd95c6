import Glibc

/// HTTP-date (RFC 9110 §5.6.7): times as seconds since the Unix epoch (UTC).
///
/// Parsing accepts the three forms a recipient must accept — IMF-fixdate
/// (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form (`Sunday, 06-Nov-94 08:49:37 GMT`)
/// and ANSI C's asctime() form (`Sun Nov  6 08:49:37 1994`) — and nothing else: any other text,
/// a day or time out of range (`31 Feb`, `25:00:00`), or a zone other than GMT gives nil.
/// Names (weekday, month, `GMT`) match without regard to case: the grammar is case-sensitive,
/// but RFC 9111 §4.2 asks a cache recipient to match dates case-insensitively, and the cache is
/// where these dates are read. The weekday must be a real name but is not
/// checked against the date (a wrong weekday is a harmless sender bug). A second of 60 (a leap
/// second) is accepted and counts as the next minute's first second.
/// Formatting always produces IMF-fixdate.
public enum HTTPDate {
    private static let shortDays = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    private static let longDays = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private static let lowerShortDays = shortDays.map { $0.lowercased() }
    private static let lowerLongDays = longDays.map { $0.lowercased() }
    private static let lowerMonths = months.map { $0.lowercased() }

    /// Seconds since the epoch, or nil when `string` is not an HTTP-date. `now` (seconds since
    /// the epoch; the clock when nil) places an RFC 850 two-digit year: a year that would be more
    /// than 50 years in the future is taken as the most recent past year with those two digits.
    public static func parse(_ string: String, now: Double? = nil) -> Double? {
        // Letters folded to lower case once: the names below are compared in lower case.
        var bytes = string.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        while let last = bytes.last, last == 0x20 || last == 0x09 { bytes.removeLast() }
        var start = 0
        while start < bytes.count, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
        if start > 0 { bytes.removeFirst(start) }
        var s = Scanner(bytes: bytes)
        guard let dayName = s.letters() else { return nil }
        if s.eat(0x2C) {                                       // ','
            guard s.eat(0x20) else { return nil }
            if lowerShortDays.contains(dayName) {
                // IMF-fixdate: DD SP Mon SP YYYY SP hh:mm:ss SP GMT
                guard let day = s.digits(2), s.eat(0x20), let month = s.month(), s.eat(0x20),
                      let year = s.digits(4), s.eat(0x20), let time = s.time(), s.eat(0x20),
                      s.literal("gmt"), s.atEnd else { return nil }
                return epoch(year: year, month: month, day: day, time: time)
            }
            if lowerLongDays.contains(dayName) {
                // RFC 850: DD-Mon-YY SP hh:mm:ss SP GMT
                guard let day = s.digits(2), s.eat(0x2D), let month = s.month(), s.eat(0x2D),
                      let yy = s.digits(2), s.eat(0x20), let time = s.time(), s.eat(0x20),
                      s.literal("gmt"), s.atEnd else { return nil }
                let reference = civil(fromDays: Int(((now ?? currentTime()) / 86400).rounded(.down))).year
                var year = reference - reference % 100 + yy
                if year > reference + 50 { year -= 100 }
                return epoch(year: year, month: month, day: day, time: time)
            }
            return nil
        }
        // asctime: Www SP Mon SP (DD | SP D) SP hh:mm:ss SP YYYY
        guard lowerShortDays.contains(dayName), s.eat(0x20), let month = s.month(), s.eat(0x20) else { return nil }
        let day: Int
        if s.eat(0x20) {
            guard let d = s.digits(1) else { return nil }
            day = d
        } else {
            guard let d = s.digits(2) else { return nil }
            day = d
        }
        guard s.eat(0x20), let time = s.time(), s.eat(0x20), let year = s.digits(4), s.atEnd else { return nil }
        return epoch(year: year, month: month, day: day, time: time)
    }

    /// IMF-fixdate for `time` (seconds since the epoch; fractions are dropped). Years outside
    /// 0001–9999 are clamped to that range, which the format can hold.
    public static func format(_ time: Double) -> String {
        let minimum = Double(daysBefore(year: 1) - daysBefore(year: 1970)) * 86400
        let maximum = Double(daysBefore(year: 10000) - daysBefore(year: 1970)) * 86400 - 1
        let t = time.isNaN ? 0 : Swift.min(Swift.max(time.rounded(.down), minimum), maximum)
        let seconds = Int(t)
        var days = seconds / 86400
        var rest = seconds % 86400
        if rest < 0 { rest += 86400; days -= 1 }
        let c = civil(fromDays: days)
        let weekday = ((days % 7) + 7 + 3) % 7            // 1970-01-01 was a Thursday (index 3 from Monday)
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        func four(_ n: Int) -> String { String(repeating: "0", count: 4 - String(n).count) + String(n) }
        return "\(shortDays[weekday]), \(two(c.day)) \(months[c.month - 1]) \(four(c.year)) \(two(rest / 3600)):\(two(rest / 60 % 60)):\(two(rest % 60)) GMT"
    }

    /// The wall clock, in seconds since the epoch.
    public static func currentTime() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    // MARK: calendar arithmetic (proleptic Gregorian, UTC)

    private static func isLeap(_ y: Int) -> Bool { y % 4 == 0 && (y % 100 != 0 || y % 400 == 0) }

    /// Days from 0001-01-01 to the first day of `year`.
    private static func daysBefore(year: Int) -> Int {
        let y = year - 1
        return 365 * y + y / 4 - y / 100 + y / 400
    }

    private static let daysBeforeMonth = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334]

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeap(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    private static func epoch(year: Int, month: Int, day: Int, time: (h: Int, m: Int, s: Int)) -> Double? {
        guard year >= 1, (1...12).contains(month), day >= 1, day <= daysIn(month: month, year: year),
              time.h < 24, time.m < 60, time.s <= 60 else { return nil }
        var days = daysBefore(year: year) - daysBefore(year: 1970) + daysBeforeMonth[month - 1] + day - 1
        if month > 2 && isLeap(year) { days += 1 }
        return Double(days * 86400 + time.h * 3600 + time.m * 60 + time.s)
    }

    private static func civil(fromDays days: Int) -> (year: Int, month: Int, day: Int) {
        let absolute = days + daysBefore(year: 1970)            // days since 0001-01-01
        var year = absolute / 366 + 1                           // never past the real year
        while daysBefore(year: year + 1) <= absolute { year += 1 }
        var dayOfYear = absolute - daysBefore(year: year)
        var month = 1
        while dayOfYear >= daysIn(month: month, year: year) {
            dayOfYear -= daysIn(month: month, year: year)
            month += 1
        }
        return (year, month, dayOfYear + 1)
    }

    private struct Scanner {
        let bytes: [UInt8]
        var i = 0

        var atEnd: Bool { i == bytes.count }

        mutating func eat(_ c: UInt8) -> Bool {
            guard i < bytes.count, bytes[i] == c else { return false }
            i += 1
            return true
        }

        mutating func letters() -> String? {
            let start = i
            while i < bytes.count, (bytes[i] | 0x20) >= 0x61, (bytes[i] | 0x20) <= 0x7A { i += 1 }
            return i > start ? String(decoding: bytes[start..<i], as: UTF8.self) : nil
        }

        mutating func digits(_ n: Int) -> Int? {
            guard bytes.count - i >= n else { return nil }
            var v = 0
            for k in 0..<n {
                let c = bytes[i + k]
                guard c >= 0x30, c <= 0x39 else { return nil }
                v = v * 10 + Int(c - 0x30)
            }
            i += n
            return v
        }

        mutating func literal(_ s: String) -> Bool {
            let b = Array(s.utf8)
            guard bytes.count - i >= b.count, Array(bytes[i..<i + b.count]) == b else { return false }
            i += b.count
            return true
        }

        mutating func month() -> Int? {
            guard bytes.count - i >= 3 else { return nil }
            let name = String(decoding: bytes[i..<i + 3], as: UTF8.self)
            guard let index = HTTPDate.lowerMonths.firstIndex(of: name) else { return nil }
            i += 3
            return index + 1
        }

        mutating func time() -> (h: Int, m: Int, s: Int)? {
            guard let h = digits(2), eat(0x3A), let m = digits(2), eat(0x3A), let s = digits(2) else { return nil }
            return (h, m, s)
        }
    }
}

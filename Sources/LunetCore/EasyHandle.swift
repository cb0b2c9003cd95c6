import CLunetCurl

/// A curl easy handle of the loop's, with what lunet hands curl by pointer for as long as the
/// handle keeps it, so that a handle reused for the same kind of request (EventLoop's configured
/// handles) is told only what changed: its error buffer and its own address (CURLOPT_PRIVATE,
/// the write and header callbacks' data) once for the handle's life, its URL and header list
/// only when they differ from the last transfer's. Steady plain requests then set no option at
/// all, where each one set ten (a curl_easy_setopt is ~100 instructions; with the error buffer
/// allocated and freed, ~1k of every request).
///
/// What curl reads by pointer stays alive here while the handle may read it: the URL handle and
/// the header list are held until replaced or the handle is reset.
final class EasyHandle {
    let raw: UnsafeMutableRawPointer
    /// CURLOPT_ERRORBUFFER: libcurl empties it when a transfer starts and writes its message in
    /// it when one fails. Read by Transfer.error(for:) before the handle is released.
    let errorBuffer: UnsafeMutablePointer<CChar>
    /// The transfer running on the handle (unretained: the loop's `running` table keeps it alive
    /// while it is in curl), for the callbacks and the completion; nil between transfers.
    var transfer: Unmanaged<Transfer>?
    /// CURLOPT_ERRORBUFFER, CURLOPT_PRIVATE, CURLOPT_WRITEDATA and CURLOPT_HEADERDATA point here.
    var pointersSet = false
    /// The parsed URL CURLOPT_CURLU and CURLOPT_URL were last set from (nil: the URL as text,
    /// or nothing yet).
    var url: ParsedURL?
    /// The header list CURLOPT_HTTPHEADER was last set to.
    var headerList: CurlHeaderList?

    init(_ raw: UnsafeMutableRawPointer) {
        self.raw = raw
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit { errorBuffer.deallocate() }

    /// After curl_easy_reset: curl has forgotten every option, pointers included.
    func forgetOptions() {
        pointersSet = false
        url = nil
        headerList = nil
    }

    /// Frees the curl handle (the object may outlive it, held by a finished transfer).
    func cleanup() {
        lunet_curl_easy_cleanup(raw)
        forgetOptions()
    }

    var opaque: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }
}

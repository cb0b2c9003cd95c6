import CLunetCurl
import Glibc

/// What libcurl hands a transfer while it runs (on the loop thread, inside
/// curl_multi_perform): the body's pieces, the header lines, an upload's reads.
extension Transfer {
    func readUpload(_ buffer: UnsafeMutablePointer<CChar>, _ n: Int) -> Int {
        if case .stream = request.body { return readStream(buffer, n) }
        while true {
            let r = read(uploadFD, buffer, n)
            if r >= 0 { return r }
            if errno == EINTR { continue }
            machine.stop(LunetError(.io, "reading the file to upload failed: \(String(cString: strerror(errno)))"))
            return Int(CURL_READFUNC_ABORT)
        }
    }

    func receiveBody(_ data: UnsafeRawPointer, _ n: Int) -> Int {
        let destination: TransferMachine.BodyDestination
        switch machine.bodyArrives(streaming: streamChunks, toFile: fileTarget != nil, decodes: decodesBody) {
        case .pause:
            // The consumer is behind: curl keeps this data and hands it over again after
            // lunet_curl_easy_pause (consumerFinished). Nothing of it is written or queued now.
            return Int(CURL_WRITEFUNC_PAUSE)
        case .take(let to, let codings):
            destination = to
            if let codings { decoder = ContentDecoder(codings: codings) }
        }
        guard let decoder else {
            if let problem = store(data, n, destination) {
                machine.stop(problem)
                return 0   // any other count than n makes curl stop with CURLE_WRITE_ERROR
            }
            return n
        }
        var problem: LunetError?
        switch decoder.decode(data, n, { piece, count in
            problem = store(piece, count, destination)
            return problem == nil
        }) {
        case .decoded: return n
        case .stopped: if let problem { machine.stop(problem) }
        case .corrupt(let coding):
            machine.stop(LunetError(.protocol, "the body is not in the \(coding) coding its Content-Encoding names"))
        case .outOfMemory: machine.stop(LunetError(.io, "out of memory while removing the body's content coding"))
        }
        return 0
    }

    /// A piece of the body (decoded when it had content codings lunet removes), where the
    /// machine sent it: the file of a download, the chunk consumer, or memory under max_body.
    private func store(_ data: UnsafeRawPointer, _ n: Int, _ destination: TransferMachine.BodyDestination) -> LunetError? {
        switch destination {
        case .file(let alsoChunks):
            let target = fileTarget.unsafelyUnwrapped
            if !target.hasBegun, let problem = target.begin(status: currentStatus, headers: headers) { return problem }
            if let problem = target.write(data, n) { return problem }
            if alsoChunks { queueChunk(data, n) }
            return nil
        case .chunks:
            queueChunk(data, n)
            return nil
        case .memory:
            break
        }
        let success = (200..<300).contains(currentStatus)
        if grpcGuard != nil, success, !grpcGuard!.feed(UnsafeRawBufferPointer(start: data, count: n)) {
            let g = grpcGuard!
            return LunetError(.tooLarge, "a gRPC message announces \(g.announced ?? 0) bytes, more than max_message (\(g.max))")
        }
        if let maxBody, body.count + n > maxBody {
            return LunetError(.tooLarge, "the body is larger than max_body (\(maxBody) bytes)")
        }
        body.append(data, n)
        return nil
    }

    /// One header line from curl (curl hands them over whole): the machine says what it means;
    /// field lines are kept as bytes (see `headerLines`).
    func receiveHeaderLine(_ data: UnsafeRawPointer, _ n: Int) -> Int {
        let b = UnsafeBufferPointer(start: data.assumingMemoryBound(to: UInt8.self), count: n)
        let (line, length) = ResponseHeadLine.read(b)
        switch machine.headLine(line) {
        case .newResponse(let status):
            trailerLines?.removeAll()
            decoder = nil
            headerLines.removeAll()
            body.removeAll()
            if case .status(_, let from) = line { reasonText = reasonPhrase(b, from: from, to: length, status: status) }
        case .keepField: headerLines.appendLine(data, length)
        case .keepTrailer:
            let trailers = trailerLines ?? ByteBuffer()
            trailerLines = trailers
            trailers.appendLine(data, length)
        case .ignore: break
        case .stop: return 0   // any other count than n makes curl stop (CURLE_WRITE_ERROR)
        }
        return n
    }
}

// curl's callbacks: C function pointers that find their transfer through the user pointer: the
// EasyHandle for the two called for every header line and body piece (set once per handle),
// the Transfer for the others. The transfer is alive while curl calls them (the loop's
// `running` table holds it until it is released from curl): the two use it without a retain and
// a release around each call (_withUnsafeGuaranteedRef).
let transferWriteCallback: curl_write_callback = { data, size, count, user in
    Unmanaged<EasyHandle>.fromOpaque(user!)._withUnsafeGuaranteedRef {
        $0.transfer.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.receiveBody(data!, size * count) }
    }
}

let transferReadCallback: curl_read_callback = { buffer, size, count, user in
    let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
    return transfer.readUpload(buffer!, size * count)
}

let transferProgressCallback: curl_xferinfo_callback = { user, dltotal, dlnow, ultotal, ulnow in
    let transfer = Unmanaged<Transfer>.fromOpaque(user!).takeUnretainedValue()
    transfer.reportProgress(Int64(dltotal), Int64(dlnow), Int64(ultotal), Int64(ulnow))
    return 0
}

/// Only the request heads (CURLINFO_HEADER_OUT) are kept; verbose text and data are ignored.
let transferDebugCallback: curl_debug_callback = { _, type, data, size, user in
    guard Int32(type.rawValue) == lunet_info_header_out(), let data, let user else { return 0 }
    let transfer = Unmanaged<Transfer>.fromOpaque(user).takeUnretainedValue()
    transfer.sentHead.removeAll()   // a redirect's request replaces the one before
    transfer.sentHead.append(data, size)
    return 0
}

let transferHeaderCallback: curl_write_callback = { data, size, count, user in
    Unmanaged<EasyHandle>.fromOpaque(user!)._withUnsafeGuaranteedRef {
        $0.transfer.unsafelyUnwrapped._withUnsafeGuaranteedRef { $0.receiveHeaderLine(data!, size * count) }
    }
}

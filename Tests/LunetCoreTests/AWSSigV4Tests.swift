import XCTest
@testable import LunetCore

/// lunet's own SigV4 signer against AWS's published test suite (AKIDEXAMPLE, 20150830T123600Z,
/// us-east-1, service "service") and the canonical forms botocore computes.
final class AWSSigV4Tests: XCTestCase {
    private let keys = AWSCredentials(provider: "aws:amz:us-east-1:service", key: "AKIDEXAMPLE",
                                      secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY")
    private let suiteTime = 1_440_938_160.0   // 2015-08-30T12:36:00Z

    private func signature(_ r: HTTPRequest) -> String? {
        r.headers["Authorization"]?.components(separatedBy: "Signature=").last
    }

    func testTheAWSTestSuiteVectors() throws {
        var get = HTTPRequest(method: "GET", url: "http://example.amazonaws.com/")
        try AWSSigV4.sign(&get, keys, now: suiteTime)
        XCTAssertEqual(get.headers["X-Amz-Date"], "20150830T123600Z")
        XCTAssertEqual(signature(get), "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31", "get-vanilla")
        XCTAssertEqual(get.headers["Authorization"],
                       "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31")
        var post = HTTPRequest(method: "POST", url: "http://example.amazonaws.com/")
        try AWSSigV4.sign(&post, keys, now: suiteTime)
        XCTAssertEqual(signature(post), "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b", "post-vanilla")
        var query = HTTPRequest(method: "GET", url: "http://example.amazonaws.com/?Param2=value2&Param1=value1")
        try AWSSigV4.sign(&query, keys, now: suiteTime)
        XCTAssertEqual(signature(query), "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500", "get-vanilla-query-order-key-case")
    }

    func testPathsAsEveryServiceButS3CanonicalisesThem() {
        XCTAssertEqual(AWSSigV4.canonicalPath(""), "/")
        XCTAssertEqual(AWSSigV4.canonicalPath("/"), "/")
        XCTAssertEqual(AWSSigV4.canonicalPath("/a@b:c+d*e!f'g(h)i$j&k=l,m;n"), "/a%40b%3Ac%2Bd%2Ae%21f%27g%28h%29i%24j%26k%3Dl%2Cm%3Bn")
        XCTAssertEqual(AWSSigV4.canonicalPath("/a%40b"), "/a%2540b", "a path's own %XX is encoded again")
        XCTAssertEqual(AWSSigV4.canonicalPath("//a//b/"), "/a/b/", "empty segments go (botocore)")
        XCTAssertEqual(AWSSigV4.canonicalPath("/a/./b/../c"), "/a/c")
        XCTAssertEqual(AWSSigV4.canonicalPath("/../x"), "/x")
        XCTAssertEqual(AWSSigV4.canonicalPath("/tilde~-_."), "/tilde~-_.")
    }

    func testQueriesAreDecodedEncodedAndSorted() {
        XCTAssertEqual(AWSSigV4.canonicalQuery("b=2&a=x%20y&c=%7e&flag&a=1"), "a=1&a=x%20y&b=2&c=~&flag=")
        XCTAssertEqual(AWSSigV4.canonicalQuery("k=a@b+c"), "k=a%40b%2Bc", "raw reserved bytes: their encoded form (+ is a plus)")
        XCTAssertEqual(AWSSigV4.canonicalQuery(nil), "")
        XCTAssertEqual(AWSSigV4.canonicalQuery(""), "")
    }

    func testProviderHostFieldAndTimestamp() throws {
        let p = try AWSSigV4.provider("aws:amz:eu-west-1:s3", host: "x")
        XCTAssertEqual(p, .init(algorithm: "AWS4-HMAC-SHA256", keyPrefix: "AWS4", terminator: "aws4_request", dateField: "X-Amz-Date",
                                region: "eu-west-1", service: "s3"))
        let fromHost = try AWSSigV4.provider("aws:amz", host: "execute-api.us-west-2.amazonaws.com")
        XCTAssertEqual([fromHost.region, fromHost.service], ["us-west-2", "execute-api"])
        XCTAssertThrowsError(try AWSSigV4.provider("aws:amz", host: "localhost"))
        XCTAssertEqual(AWSSigV4.hostField("user:pw@h.test:80", scheme: "http"), "h.test")
        XCTAssertEqual(AWSSigV4.hostField("h.test:8080", scheme: "http"), "h.test:8080")
        XCTAssertEqual(AWSSigV4.hostField("[::1]:443", scheme: "https"), "[::1]")
        XCTAssertEqual(AWSSigV4.timestamp(suiteTime), "20150830T123600Z")
    }

    func testHMACSHA256AgainstRFC4231() {
        // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
        let mac = SHA256.hmac(key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8))
        XCTAssertEqual(mac.map { String(format: "%02x", $0) }.joined(), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        // Test case 6: a key longer than the block (131 bytes of 0xaa) is hashed first.
        let long = SHA256.hmac(key: [UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))
        XCTAssertEqual(long.map { String(format: "%02x", $0) }.joined(), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
    }

    func testAMultipartBodyForAServiceButS3IsRefusedNotMissigned() {
        var r = HTTPRequest(method: "POST", url: "http://h.test/up", body: .multipart([MultipartPart(name: "a", content: .bytes(ByteBuffer()))]))
        XCTAssertThrowsError(try AWSSigV4.sign(&r, keys, now: suiteTime)) { XCTAssertEqual(($0 as? LunetError)?.kind, .argument) }
    }
}

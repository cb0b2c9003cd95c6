#!/usr/bin/env python3
"""An origin that checks credentials, for lunet's auth tests, on Python's standard library only.

    python3 Tests/servers/auth_server.py            # prints "PORT" on its first line, serves on 127.0.0.1
    python3 Tests/servers/auth_server.py --port 9000
    python3 Tests/servers/auth_server.py --vector   # prints the signatures this verifier computes for
                                              # AWS's SigV4 test-suite requests, and exits

Paths:
  /echo...              200 JSON: the method, path, query string, headers and body it received
                        (/echo/cacheable with Cache-Control: max-age=60)
  /oauth/token          an OAuth 2.0 token endpoint (RFC 6749): grant_type client_credentials,
                        password or refresh_token; client credentials in Basic auth or the form.
                        Tokens live `expires_in` seconds: ?expires_in=N on the token URL, else 3600.
                        ?slow=SECONDS answers that much later (so that requests pile up on it).
  /oauth/resource       200 with a token the endpoint issued and that is still live; else 401
                        with WWW-Authenticate: Bearer error="invalid_token" (RFC 6750)
  /oauth/revoke?client=ID   every token of that client stops working (a server-side expiry)
  /oauth/reject?client=ID   the resource refuses that client's tokens, new ones too
  /oauth/stats?client=ID    JSON: token requests by grant, resource requests, tokens issued
  /ntlm?key=K           NTLM (MS-NLMP): 401 "NTLM", then a type-2 challenge for a type-1
                        message, then checks the type-3 answer's NTLMv2 proof for user
                        "ntuser" / password "ntpass" (domain "LUNET"): 200 JSON or 401
  /ntlm/log?key=K       the Authorization fields /ntlm?key=K received, in order
  /negotiate            401 WWW-Authenticate: Negotiate unless the request answers it
  anything else         with an "AWS4-HMAC-SHA256" Authorization: checked as AWS Signature
                        Version 4 (keys below); 200 or 403, JSON either way, with the canonical
                        request the server made. Without one: 403.
"""
import base64
import hashlib
import hmac
import json
import struct
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, quote, unquote, urlsplit

# SigV4 secrets by access key. AKIDEXAMPLE's is the AWS test suite's.
AWS_KEYS = {
    "AKIDEXAMPLE": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
    "AKIDLUNET": "lunet/test+secret",
}
# A key whose requests must carry this session token (temporary credentials).
AWS_SESSION_KEY, AWS_SESSION_TOKEN = "ASIALUNET", "lunet-session-token"
AWS_KEYS[AWS_SESSION_KEY] = "lunet-temporary-secret"

# Any client id is known; its secret is the id followed by "-secret" (each test takes its own
# client, so that its counters are its own).
OAUTH_USERS = {"alice": "alice-pass"}

lock = threading.Lock()
tokens = {}        # access token -> { client, expires, generation }
refresh = {}       # refresh token -> client
stats = {}         # client -> counters
generation = {}    # client -> revocation generation
rejecting = set()  # clients whose tokens the resource refuses
ntlm_log = {}      # /ntlm?key=K: the Authorization fields received, in order
serial = [0]


def counters(client):
    return stats.setdefault(client, {"token_requests": 0, "grants": {}, "resource_requests": 0, "client_auth": {}})


# AWS Signature Version 4 ---------------------------------------------------------------------

def aws_encode(s, keep_slash=False):
    """URI-encode as SigV4 says: every byte but A-Z a-z 0-9 - _ . ~ (and '/' in paths)."""
    return quote(s, safe="-_.~" + ("/" if keep_slash else ""))


def canonical_query(query):
    pairs = []
    for part in query.split("&") if query else []:
        if part == "":
            continue
        name, _, value = part.partition("=")
        pairs.append((aws_encode(unquote(name)), aws_encode(unquote(value))))
    return "&".join(n + "=" + v for n, v in sorted(pairs))


def canonical_uri(path, service):
    if service == "s3":
        return aws_encode(unquote(path), keep_slash=True) or "/"
    # Every other service encodes the path's segments twice: once as sent, once more here.
    return aws_encode(path, keep_slash=True) or "/"


def canonical_request(method, path, query, headers, signed, payload_hash, service):
    lines = []
    for name in signed:
        values = headers.get(name, [])
        lines.append(name + ":" + ",".join(" ".join(v.split()) for v in values))
    return "\n".join([method, canonical_uri(path, service), canonical_query(query),
                      "\n".join(lines) + "\n", ";".join(signed), payload_hash])


def sign(secret, amz_date, region, service, creq):
    scope = "/".join([amz_date[:8], region, service, "aws4_request"])
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(creq.encode()).hexdigest()])
    key = ("AWS4" + secret).encode()
    for part in (amz_date[:8], region, service, "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()


def verify_sigv4(method, path, query, headers, body):
    """(status, report): headers is { lower-case name: [values] }."""
    auth = (headers.get("authorization") or [""])[0]
    report = {}
    if not auth.startswith("AWS4-HMAC-SHA256 "):
        return 403, {"ok": False, "reason": "no AWS4-HMAC-SHA256 Authorization"}
    fields = {}
    for item in auth[len("AWS4-HMAC-SHA256 "):].split(","):
        k, _, v = item.strip().partition("=")
        fields[k] = v
    try:
        key, day, region, service, terminal = fields["Credential"].split("/")
        signed = fields["SignedHeaders"].split(";")
        got = fields["Signature"]
    except (KeyError, ValueError):
        return 403, {"ok": False, "reason": "malformed Authorization: " + auth}
    report.update(key=key, credential_date=day, region=region, service=service, signed_headers=signed, signature=got,
                  amz_date=headers.get("x-amz-date", []), security_token=bool(headers.get("x-amz-security-token")))
    if key not in AWS_KEYS:
        return 403, dict(report, ok=False, reason="unknown access key " + key)
    dates = headers.get("x-amz-date", [])
    if len(dates) != 1:
        return 403, dict(report, ok=False, reason="%d X-Amz-Date fields" % len(dates))
    amz_date = dates[0]
    if not amz_date.startswith(day) or terminal != "aws4_request":
        return 403, dict(report, ok=False, reason="the credential scope does not match X-Amz-Date")
    for required in ("host", "x-amz-date"):
        if required not in signed:
            return 403, dict(report, ok=False, reason=required + " is not signed")
    if key == AWS_SESSION_KEY and (headers.get("x-amz-security-token") != [AWS_SESSION_TOKEN]
                                   or "x-amz-security-token" not in signed):
        return 403, dict(report, ok=False, reason="temporary credentials need their signed session token")
    payload = (headers.get("x-amz-content-sha256") or [hashlib.sha256(body).hexdigest()])[0]
    creq = canonical_request(method, path, query, headers, signed, payload, service)
    want = sign(AWS_KEYS[key], amz_date, region, service, creq)
    report["canonical_request"] = creq
    if not hmac.compare_digest(want, got):
        return 403, dict(report, ok=False, reason="signature mismatch")
    return 200, dict(report, ok=True)


# The AWS SigV4 test suite's requests (credentials AKIDEXAMPLE, 20150830T123600Z, us-east-1,
# service "service"), as this verifier signs them.
VECTORS = {
    "get-vanilla": ("GET", "/", ""),
    "post-vanilla": ("POST", "/", ""),
    "get-vanilla-query-order-key-case": ("GET", "/", "Param2=value2&Param1=value1"),
}


def vector_signatures():
    out = {}
    for name, (method, path, query) in VECTORS.items():
        headers = {"host": ["example.amazonaws.com"], "x-amz-date": ["20150830T123600Z"]}
        creq = canonical_request(method, path, query, headers, ["host", "x-amz-date"],
                                 hashlib.sha256(b"").hexdigest(), "service")
        out[name] = sign(AWS_KEYS["AKIDEXAMPLE"], "20150830T123600Z", "us-east-1", "service", creq)
    return out


# NTLM (MS-NLMP), NTLMv2 answers only ---------------------------------------------------------

def md4(data):
    """MD4 (RFC 1320): OpenSSL 3 keeps it in its legacy provider, so hashlib may not have it."""
    def rol(x, n):
        x &= 0xFFFFFFFF
        return ((x << n) | (x >> (32 - n))) & 0xFFFFFFFF
    msg = bytearray(data) + b"\x80"
    while len(msg) % 64 != 56:
        msg.append(0)
    msg += struct.pack("<Q", (len(data) * 8) & 0xFFFFFFFFFFFFFFFF)
    a, b, c, d = 0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476
    for off in range(0, len(msg), 64):
        x = struct.unpack("<16I", msg[off:off + 64])
        aa, bb, cc, dd = a, b, c, d
        f = lambda x_, y, z: (x_ & y) | (~x_ & z)
        g = lambda x_, y, z: (x_ & y) | (x_ & z) | (y & z)
        h = lambda x_, y, z: x_ ^ y ^ z
        for i in range(16):
            k, s = i, (3, 7, 11, 19)[i % 4]
            if i % 4 == 0: a = rol(a + f(b, c, d) + x[k], s)
            elif i % 4 == 1: d = rol(d + f(a, b, c) + x[k], s)
            elif i % 4 == 2: c = rol(c + f(d, a, b) + x[k], s)
            else: b = rol(b + f(c, d, a) + x[k], s)
        for i in range(16):
            k, s = (i % 4) * 4 + i // 4, (3, 5, 9, 13)[i % 4]
            if i % 4 == 0: a = rol(a + g(b, c, d) + x[k] + 0x5A827999, s)
            elif i % 4 == 1: d = rol(d + g(a, b, c) + x[k] + 0x5A827999, s)
            elif i % 4 == 2: c = rol(c + g(d, a, b) + x[k] + 0x5A827999, s)
            else: b = rol(b + g(c, d, a) + x[k] + 0x5A827999, s)
        order = (0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15)
        for i in range(16):
            k, s = order[i], (3, 9, 11, 15)[i % 4]
            if i % 4 == 0: a = rol(a + h(b, c, d) + x[k] + 0x6ED9EBA1, s)
            elif i % 4 == 1: d = rol(d + h(a, b, c) + x[k] + 0x6ED9EBA1, s)
            elif i % 4 == 2: c = rol(c + h(d, a, b) + x[k] + 0x6ED9EBA1, s)
            else: b = rol(b + h(c, d, a) + x[k] + 0x6ED9EBA1, s)
        a, b, c, d = (a + aa) & 0xFFFFFFFF, (b + bb) & 0xFFFFFFFF, (c + cc) & 0xFFFFFFFF, (d + dd) & 0xFFFFFFFF
    return struct.pack("<4I", a, b, c, d)


NTLM_USER, NTLM_PASSWORD, NTLM_DOMAIN = "ntuser", "ntpass", "LUNET"
NTLM_CHALLENGE = b"\x01\x23\x45\x67\x89\xab\xcd\xef"


def ntlm_type2():
    # Target info: the NetBIOS domain name, then the end of the list (MsvAvEOL).
    name = NTLM_DOMAIN.encode("utf-16-le")
    info = struct.pack("<HH", 2, len(name)) + name + struct.pack("<HH", 0, 0)
    flags = 0x00000001 | 0x00000200 | 0x00080000 | 0x00800000 | 0x20000000 | 0x80000000
    # unicode, NTLM, extended session security, target info, 128-bit, 56-bit
    head_len = 48
    msg = b"NTLMSSP\x00" + struct.pack("<I", 2)
    msg += struct.pack("<HHI", len(name), len(name), head_len)            # target name
    msg += struct.pack("<I", flags) + NTLM_CHALLENGE + b"\x00" * 8
    msg += struct.pack("<HHI", len(info), len(info), head_len + len(name))  # target info
    return msg + name + info


def ntlm_field(msg, offset):
    length, _, where = struct.unpack("<HHI", msg[offset:offset + 8])
    return msg[where:where + length]


def ntlm_check_type3(msg):
    """(ok, user, reason) for a type-3 message answering NTLM_CHALLENGE."""
    if msg[:8] != b"NTLMSSP\x00" or struct.unpack("<I", msg[8:12])[0] != 3:
        return False, "", "not a type-3 message"
    nt = ntlm_field(msg, 20)
    domain = ntlm_field(msg, 28).decode("utf-16-le", "replace")
    user = ntlm_field(msg, 36).decode("utf-16-le", "replace")
    if len(nt) <= 24:
        return False, user, "an NTLMv1 answer (NTLMv2 expected)"
    key = hmac.new(md4(NTLM_PASSWORD.encode("utf-16-le")), (user.upper() + domain).encode("utf-16-le"), hashlib.md5).digest()
    proof = hmac.new(key, NTLM_CHALLENGE + nt[16:], hashlib.md5).digest()
    if user != NTLM_USER or not hmac.compare_digest(proof, nt[:16]):
        return False, user, "wrong user or password"
    return True, user, ""


# The server -------------------------------------------------------------------------------

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"   # NTLM authenticates a connection: keep it open

    def log_message(self, *args):
        pass

    def reply(self, status, body, headers=()):
        data = body if isinstance(body, bytes) else json.dumps(body, sort_keys=True).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers:
            self.send_header(name, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def fields(self):
        out = {}
        for name, value in self.headers.items():
            out.setdefault(name.lower(), []).append(value)
        return out

    def handle_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        url = urlsplit(self.path)
        q = dict(parse_qsl(url.query))
        path = url.path
        if path.startswith("/echo"):
            # /echo/cacheable: fresh for a minute (a cache may answer it again)
            extra = [("Cache-Control", "max-age=60")] if path == "/echo/cacheable" else []
            return self.reply(200, {"method": self.command, "path": path, "query": url.query,
                                    "headers": self.fields(), "body": body.decode("latin-1")}, extra)
        if path == "/oauth/token":
            return self.token(q, body)
        if path == "/oauth/resource":
            return self.resource()
        if path in ("/oauth/revoke", "/oauth/reject", "/oauth/stats"):
            client = q.get("client", "")
            with lock:
                if path == "/oauth/revoke":
                    generation[client] = generation.get(client, 0) + 1
                elif path == "/oauth/reject":
                    rejecting.add(client)
                return self.reply(200, counters(client))
        if path == "/ntlm":
            with lock:
                ntlm_log.setdefault(q.get("key", ""), []).append(self.headers.get("Authorization", ""))
            return self.ntlm()
        if path == "/ntlm/log":
            with lock:
                return self.reply(200, ntlm_log.get(q.get("key", ""), []))
        if path == "/negotiate":
            auth = self.headers.get("Authorization", "")
            if auth.startswith("Negotiate "):
                return self.reply(200, {"negotiate": True})
            return self.reply(401, {"negotiate": False}, [("WWW-Authenticate", "Negotiate")])
        status, report = verify_sigv4(self.command, path, url.query, self.fields(), body)
        report["received"] = {"method": self.command, "path": path, "query": url.query, "body": body.decode("latin-1")}
        return self.reply(status, report)

    def token(self, q, body):
        form = dict(parse_qsl(body.decode("latin-1")))
        client, secret, how = form.get("client_id"), form.get("client_secret"), "body"
        basic = self.headers.get("Authorization", "")
        if basic.startswith("Basic "):
            user, _, password = base64.b64decode(basic[6:]).decode().partition(":")
            client, secret, how = unquote(user), unquote(password), "basic"
        if "slow" in q:
            time.sleep(float(q["slow"]))
        if not client or secret != client + "-secret":
            return self.reply(401, {"error": "invalid_client", "error_description": "unknown client or wrong secret"})
        grant = form.get("grant_type")
        with lock:
            c = counters(client)
            c["token_requests"] += 1
            c["grants"][grant] = c["grants"].get(grant, 0) + 1
            c["client_auth"][how] = c["client_auth"].get(how, 0) + 1
            c["last_scope"] = form.get("scope")
            if grant == "password":
                if OAUTH_USERS.get(form.get("username")) != form.get("password"):
                    return self.reply(400, {"error": "invalid_grant", "error_description": "bad user or password"})
            elif grant == "refresh_token":
                if refresh.get(form.get("refresh_token")) != client:
                    return self.reply(400, {"error": "invalid_grant", "error_description": "unknown refresh token"})
                del refresh[form["refresh_token"]]   # rotated: each is good once
            elif grant != "client_credentials":
                return self.reply(400, {"error": "unsupported_grant_type"})
            serial[0] += 1
            access = "at-%s-%d" % (client, serial[0])
            expires_in = int(q.get("expires_in", 3600))
            tokens[access] = {"client": client, "expires": time.time() + expires_in, "generation": generation.get(client, 0)}
            answer = {"access_token": access, "token_type": "Bearer", "expires_in": expires_in}
            if grant != "client_credentials":
                rt = "rt-%s-%d" % (client, serial[0])
                refresh[rt] = client
                answer["refresh_token"] = rt
            c["tokens_issued"] = c.get("tokens_issued", 0) + 1
        return self.reply(200, answer, [("Cache-Control", "no-store")])

    def resource(self):
        auth = self.headers.get("Authorization", "")
        token = auth[7:] if auth.startswith("Bearer ") else None
        with lock:
            t = tokens.get(token)
            if t:
                counters(t["client"])["resource_requests"] += 1
            live = t and t["expires"] > time.time() and t["generation"] == generation.get(t["client"], 0) \
                and t["client"] not in rejecting
        if not token:
            return self.reply(401, {"error": "no token"}, [("WWW-Authenticate", 'Bearer realm="lunet"')])
        if not live:
            return self.reply(401, {"error": "invalid_token"},
                              [("WWW-Authenticate", 'Bearer realm="lunet", error="invalid_token", error_description="expired"')])
        return self.reply(200, {"client": t["client"], "token_ok": True})

    def ntlm(self):
        auth = self.headers.get("Authorization", "")
        if not auth.startswith("NTLM "):
            return self.reply(401, {"step": 0}, [("WWW-Authenticate", "NTLM")])
        msg = base64.b64decode(auth[5:])
        kind = struct.unpack("<I", msg[8:12])[0] if msg[:8] == b"NTLMSSP\x00" else 0
        if kind == 1:
            return self.reply(401, {"step": 1, "type1": auth[5:]},
                              [("WWW-Authenticate", "NTLM " + base64.b64encode(ntlm_type2()).decode())])
        ok, user, reason = ntlm_check_type3(msg)
        if not ok:
            return self.reply(401, {"step": 3, "user": user, "reason": reason}, [("WWW-Authenticate", "NTLM")])
        return self.reply(200, {"authenticated": True, "user": user})

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = handle_any


def main():
    if "--vector" in sys.argv:
        print(json.dumps(vector_signatures(), sort_keys=True))
        return
    port = int(sys.argv[sys.argv.index("--port") + 1]) if "--port" in sys.argv else 0
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()

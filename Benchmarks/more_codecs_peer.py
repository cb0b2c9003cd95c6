#!/usr/bin/env python3
"""The XML peer of the codecs benchmark (j): Python's xml.etree.ElementTree (the C accelerator,
expat underneath) decoding and encoding the same document as more_codecs.lua, timed the same
way (process CPU time around whole calls, at least SECONDS each).
usage: python3 more_codecs_peer.py xml FILE SECONDS [IGNORED]   (the arguments of more_codecs.lua)
Prints "decode codec=etree bytes=... out=... reps=... cpu=..." and the same for encode."""
import sys
import time
import xml.etree.ElementTree as ET


def measure(name, fn, arg, nbytes, seconds):
    out = fn(arg)  # a warm-up call, also what one call produces
    reps = 0
    c0 = time.process_time()
    while True:
        fn(arg)
        reps += 1
        c1 = time.process_time()
        if c1 - c0 >= seconds:
            break
    size = len(out) if isinstance(out, bytes) else nbytes
    print(f"{name} codec=etree bytes={nbytes} out={size} reps={reps} cpu={c1 - c0:.6f}")


def main():
    if len(sys.argv) < 4 or sys.argv[1] != "xml":
        sys.exit("usage: more_codecs_peer.py xml FILE SECONDS [IGNORED]")
    path, seconds = sys.argv[2], float(sys.argv[3])
    with open(path, "rb") as f:
        doc = f.read()
    root = ET.fromstring(doc)
    assert root.tag == "{urn:lunet:bench}catalog" and len(root) > 0
    measure("decode", ET.fromstring, doc, len(doc), seconds)
    measure("encode", lambda r: ET.tostring(r, encoding="utf-8"), root, len(doc), seconds)


main()

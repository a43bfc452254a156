#!/usr/bin/env python3
"""A plain TCP round trip on loopback: what a command and its answer cost
on the wire alone, without any iSCSI.

A forked server on 127.0.0.1 answers every request of REQ bytes (default
48, one BHS) with RESP bytes (default 4096, one 4 KiB Data-In); the client
sends a request, reads the whole answer, and does it N times after a
warm-up. TCP_NODELAY on both ends. Prints the mean and the fastest round
trip in microseconds; --json FILE also writes {"mean_us", "min_us", "n",
"req", "resp"}. scripts/link --delay checks its delay with the fastest:
a delay can only make every round trip longer.

    scripts/lib/pingpong.py [-n N] [--req BYTES] [--resp BYTES]
                            [--warmup N] [--json FILE]
"""
import argparse
import json
import os
import socket
import sys
import time


def recv_exact(sock, view):
    got = 0
    n = len(view)
    while got < n:
        k = sock.recv_into(view[got:], n - got)
        if k == 0:
            return False
        got += k
    return True


def serve(lsock, req, resp):
    conn, _ = lsock.accept()
    lsock.close()
    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    buf = memoryview(bytearray(req))
    answer = os.urandom(resp)
    while recv_exact(conn, buf):
        conn.sendall(answer)
    conn.close()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=20000, help="round trips timed")
    ap.add_argument("--warmup", type=int, default=1000)
    ap.add_argument("--req", type=int, default=48)
    ap.add_argument("--resp", type=int, default=4096)
    ap.add_argument("--json")
    a = ap.parse_args()
    if a.n < 1 or a.req < 1 or a.resp < 1 or a.warmup < 0:
        ap.error("N, REQ and RESP must be positive")

    lsock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(1)
    addr = lsock.getsockname()
    pid = os.fork()
    if pid == 0:
        try:
            serve(lsock, a.req, a.resp)
        finally:
            os._exit(0)
    lsock.close()
    c = socket.create_connection(addr)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    request = os.urandom(a.req)
    answer = memoryview(bytearray(a.resp))
    for _ in range(a.warmup):
        c.sendall(request)
        if not recv_exact(c, answer):
            sys.exit("pingpong: the server went away")
    t0 = time.perf_counter()
    fastest = float("inf")
    for _ in range(a.n):
        t = time.perf_counter()
        c.sendall(request)
        if not recv_exact(c, answer):
            sys.exit("pingpong: the server went away")
        fastest = min(fastest, time.perf_counter() - t)
    t1 = time.perf_counter()
    c.close()
    os.waitpid(pid, 0)
    mean = (t1 - t0) * 1e6 / a.n
    print("tcp ping-pong on 127.0.0.1: %d B request, %d B answer: "
          "mean %.1f us, fastest %.1f us over %d round trips" % (
              a.req, a.resp, mean, fastest * 1e6, a.n))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"mean_us": mean, "min_us": fastest * 1e6, "n": a.n,
                       "req": a.req, "resp": a.resp}, f)
            f.write("\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Event-stream answers on one keep-alive connection, as a plain HTTP client sees them.

    python3 scripts/bench-keepalive.py [BINARY...]     (default: target/release/evalgate)

For each build: starts its reference proxy (`evalgate proxy`) over datasets/v0 with MCP sessions
(`"mcp_sessions": true`: every answer a server-sent event stream), every server replayed by
`evalgate replay`; then, on ONE connection of Python's own http.client (keep-alive, as most
clients keep it), does the MCP handshake and 30 `tools/call` of `retrieve_tools`, and prints the
median and largest time of a call. A server that writes an event stream's headers and its events
apart without TCP_NODELAY makes each call on a reused connection wait for the client's delayed
acknowledgement, ~40 ms (docs/performance-history.md); evalgate's proxy sets TCP_NODELAY since
2026-11-27.
"""

import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CORPUS = os.path.join(ROOT, "datasets", "v0", "corpus.json")
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", "X-API-Key": "k"}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def calls(port, n=30):
    deadline = time.time() + 60
    while True:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            c.request("GET", "/readyz", headers=HEADERS)
            r = c.getresponse()
            r.read()
            if r.status == 200:
                break
        except OSError:
            pass
        if time.time() > deadline:
            sys.exit(f"the proxy on port {port} did not become ready")
        time.sleep(0.2)

    def post(body, extra=None):
        c.request("POST", "/mcp", json.dumps(body), {**HEADERS, **(extra or {})})
        r = c.getresponse()
        return r, r.read()

    r, body = post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}})
    session = r.getheader("mcp-session-id")
    if not session:
        sys.exit(f"no session id from initialize: HTTP {r.status} {body[:200]!r}")
    s = {"mcp-session-id": session, "mcp-protocol-version": "2025-06-18"}
    post({"jsonrpc": "2.0", "method": "notifications/initialized"}, s)
    times = []
    for i in range(n):
        t = time.perf_counter()
        r, body = post({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": {
            "name": "retrieve_tools", "arguments": {"query": "create a github issue", "limit": 10}}}, s)
        times.append(time.perf_counter() - t)
        if r.status != 200 or b'"result"' not in body:
            sys.exit(f"call {i + 1}: HTTP {r.status} {body[:300]!r}")
    return r.getheader("content-type"), times


def main():
    binaries = sys.argv[1:] or [os.path.join(ROOT, "target", "release", "evalgate")]
    servers = sorted({t["server"] for t in json.load(open(CORPUS, encoding="utf-8"))["tools"]})
    for binary in binaries:
        with tempfile.TemporaryDirectory() as work:
            config = os.path.join(work, "mcp_config.json")
            json.dump({"api_key": "k", "mcp_sessions": True, "mcpServers": [
                {"name": s, "protocol": "stdio", "command": binary,
                 "args": ["replay", "--corpus", CORPUS, "--server", s], "enabled": True}
                for s in servers]}, open(config, "w"))
            port = free_port()
            log = open(os.path.join(work, "proxy.log"), "w")
            proxy = subprocess.Popen([binary, "proxy", "--mcpproxy-config", config, "--listen", f"127.0.0.1:{port}"],
                                     stdout=log, stderr=log)
            try:
                kind, times = calls(port)
            finally:
                proxy.terminate()
                proxy.wait(timeout=30)
            print(f"{binary}: {len(times)} calls on one connection, {kind}: "
                  f"median {statistics.median(times) * 1000:.2f} ms, largest {max(times) * 1000:.2f} ms")


if __name__ == "__main__":
    main()

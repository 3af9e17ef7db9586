#!/usr/bin/env python3
"""Snapshot the tools/list of real MCP servers over stdio (standard library only).

Two modes:

  snapshot.py one [--env K=V ...] [--timeout S] -- COMMAND [ARGS...]
      Launch one server, print {"server_info": ..., "protocol_version": ..., "tools": [...]}
      as JSON on stdout.

  snapshot.py corpus --pins datasets/tools/servers.json --out datasets/v0/corpus.json \
                     --npm-prefix DIR --venv DIR --scratch DIR
      Launch every server listed in the pins file and write the frozen corpus
      deterministically (tools sorted by tool_id, 2-space indent, fixed key order,
      trailing newline).

The client speaks newline-delimited JSON-RPC 2.0 (the MCP stdio transport):
initialize (protocolVersion 2025-06-18) -> notifications/initialized ->
tools/list, following nextCursor over every page. The child is always killed
afterwards.
"""

import argparse
import json
import os
import queue
import subprocess
import sys
import threading
import time

PROTOCOL_VERSION = "2025-06-18"
CLIENT_INFO = {"name": "evalgate-snapshot", "version": "0.1.0"}
MAX_PAGES = 100


class McpError(Exception):
    pass


class StdioClient:
    def __init__(self, argv, env, cwd=None, timeout=30.0):
        self.timeout = timeout
        self.proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        self.lines = queue.Queue()
        self.stderr_tail = []
        self.next_id = 1
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self):
        for raw in self.proc.stdout:
            self.lines.put(raw)
        self.lines.put(None)

    def _read_stderr(self):
        for raw in self.proc.stderr:
            self.stderr_tail.append(raw.decode("utf-8", "replace").rstrip("\n"))
            del self.stderr_tail[:-40]

    def _send(self, msg):
        data = (json.dumps(msg, separators=(",", ":")) + "\n").encode("utf-8")
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as exc:
            raise McpError(f"server closed stdin: {exc}; stderr: {self._stderr()}")

    def _stderr(self):
        return " | ".join(self.stderr_tail[-10:])

    def notify(self, method, params=None):
        msg = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)

    def request(self, method, params=None):
        req_id = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": req_id, "method": method}
        if params is not None:
            msg["params"] = params
        self._send(msg)
        deadline = time.monotonic() + self.timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise McpError(f"timeout waiting for {method}; stderr: {self._stderr()}")
            try:
                raw = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if raw is None:
                raise McpError(f"server exited during {method}; stderr: {self._stderr()}")
            line = raw.decode("utf-8", "replace").strip()
            if not line:
                continue
            try:
                resp = json.loads(line)
            except json.JSONDecodeError:
                # Some servers print banners on stdout; ignore non-JSON lines.
                continue
            if not isinstance(resp, dict):
                continue
            if "method" in resp:
                if "id" in resp:
                    self._answer_server_request(resp)
                continue  # a notification (logging, list_changed, ...)
            if resp.get("id") != req_id:
                continue
            if "error" in resp:
                raise McpError(f"{method} failed: {resp['error']}")
            return resp.get("result", {})

    def _answer_server_request(self, req):
        if req["method"] == "roots/list":
            self._send({"jsonrpc": "2.0", "id": req["id"], "result": {"roots": []}})
        elif req["method"] == "ping":
            self._send({"jsonrpc": "2.0", "id": req["id"], "result": {}})
        else:
            self._send({
                "jsonrpc": "2.0",
                "id": req["id"],
                "error": {"code": -32601, "message": "method not supported by snapshot client"},
            })

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 15)
                self.proc.wait(timeout=3)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, 9)
            except ProcessLookupError:
                pass
            self.proc.wait(timeout=5)


def snapshot(argv, env, cwd=None, timeout=30.0):
    client = StdioClient(argv, env, cwd=cwd, timeout=timeout)
    try:
        init = client.request("initialize", {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {},
            "clientInfo": CLIENT_INFO,
        })
        client.notify("notifications/initialized")
        tools = []
        cursor = None
        for _ in range(MAX_PAGES):
            params = {"cursor": cursor} if cursor is not None else {}
            page = client.request("tools/list", params)
            tools.extend(page.get("tools", []))
            cursor = page.get("nextCursor")
            if not cursor:
                break
        else:
            raise McpError(f"tools/list did not finish within {MAX_PAGES} pages")
        return {
            "server_info": init.get("serverInfo", {}),
            "protocol_version": init.get("protocolVersion"),
            "tools": tools,
        }
    finally:
        client.close()


def base_env():
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": os.environ.get("HOME", "/tmp"),
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TZ": "UTC",
        "NO_COLOR": "1",
        "PYTHONIOENCODING": "utf-8",
    }
    return env


def expand(value, subst):
    for key, repl in subst.items():
        value = value.replace("{" + key + "}", repl)
    return value


TOOL_KEYS = [
    ("title", "title"),
    ("annotations", "annotations"),
    ("outputSchema", "output_schema"),
]


def tool_entry(server_name, tool):
    name = tool["name"]
    entry = {
        "tool_id": f"{server_name}:{name}",
        "server": server_name,
        "tool": name,
        "description": tool.get("description", ""),
        "schema": tool.get("inputSchema", {}),
    }
    for src, dst in TOOL_KEYS:
        if src in tool:
            entry[dst] = tool[src]
    known = {"name", "description", "inputSchema"} | {k for k, _ in TOOL_KEYS}
    extra = {k: tool[k] for k in sorted(tool) if k not in known}
    if extra:
        entry["extra"] = extra
    return entry


def build_corpus(pins, subst, timeout):
    servers_out = []
    tools_out = []
    for pin in sorted(pins["servers"], key=lambda p: p["name"]):
        name = pin["name"]
        if ":" in name or name != name.lower():
            raise SystemExit(f"bad server name {name!r}")
        env = base_env()
        for key, val in pin.get("env", {}).items():
            env[key] = expand(val, subst)
        argv = [expand(pin["command"], subst)] + [expand(a, subst) for a in pin.get("args", [])]
        print(f"snapshot: {name} ({pin['package']}@{pin['version']})", file=sys.stderr)
        try:
            snap = snapshot(argv, env, cwd=subst.get("scratch"), timeout=timeout)
        except McpError as exc:
            raise McpError(f"server {name!r}: {exc}") from None
        info = snap["server_info"]
        servers_out.append({
            "name": name,
            "registry": pin["registry"],
            "package": pin["package"],
            "version": pin["version"],
            "license": pin["license"],
            "taken": pin["taken"],
            "server_info": {"name": info.get("name", ""), "version": info.get("version", "")},
            "dummy_env": sorted(pin.get("dummy_env", [])),
        })
        print(f"  {len(snap['tools'])} tools, protocol {snap['protocol_version']}", file=sys.stderr)
        for tool in snap["tools"]:
            tools_out.append(tool_entry(name, tool))
    tools_out.sort(key=lambda t: t["tool_id"])
    seen = set()
    for t in tools_out:
        if t["tool_id"] in seen:
            raise SystemExit(f"duplicate tool_id {t['tool_id']}")
        seen.add(t["tool_id"])
    return {
        "version": "corpus_v0",
        "generated_from": {
            "source": "tools/list of real MCP servers installed from npm and PyPI",
            "note": "regenerate with datasets/regenerate.sh",
        },
        "servers": servers_out,
        "tools": tools_out,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)

    one = sub.add_parser("one", help="snapshot a single server command")
    one.add_argument("--env", action="append", default=[], help="K=V added to the child environment")
    one.add_argument("--timeout", type=float, default=30.0)
    one.add_argument("argv", nargs=argparse.REMAINDER)

    cor = sub.add_parser("corpus", help="snapshot every pinned server into a corpus file")
    cor.add_argument("--pins", required=True)
    cor.add_argument("--out", required=True)
    cor.add_argument("--npm-prefix", required=True)
    cor.add_argument("--venv", required=True)
    cor.add_argument("--scratch", required=True)
    cor.add_argument("--timeout", type=float, default=60.0)

    args = ap.parse_args()
    if args.mode == "one":
        argv = args.argv[1:] if args.argv and args.argv[0] == "--" else args.argv
        if not argv:
            ap.error("missing server command")
        env = base_env()
        for kv in args.env:
            k, _, v = kv.partition("=")
            env[k] = v
        snap = snapshot(argv, env, timeout=args.timeout)
        json.dump(snap, sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
        return

    with open(args.pins, encoding="utf-8") as fh:
        pins = json.load(fh)
    subst = {
        "npm_bin": os.path.join(os.path.abspath(args.npm_prefix), "node_modules", ".bin"),
        "venv_bin": os.path.join(os.path.abspath(args.venv), "bin"),
        "scratch": os.path.abspath(args.scratch),
    }
    corpus = build_corpus(pins, subst, args.timeout)
    text = json.dumps(corpus, indent=2, ensure_ascii=False) + "\n"
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(text)
    os.replace(tmp, args.out)
    print(f"wrote {args.out}: {len(corpus['servers'])} servers, {len(corpus['tools'])} tools", file=sys.stderr)


if __name__ == "__main__":
    try:
        main()
    except McpError as exc:
        sys.exit(f"snapshot: {exc}")

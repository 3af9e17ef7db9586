#!/usr/bin/env python3
"""Validate datasets/v0/security.json and print its composition.

    python3 datasets/tools/check_security.py [--security PATH] [--corpus PATH] [--quiet]

Checks (any failure -> exit 1):
  * valid JSON, version "security_v0", non-empty "entries" list
  * unique ids; id prefix matches category (tp-/pi-/sh-/rp-/bn-/hn-NNN)
  * label/category agreement (attack categories -> malicious; benign, hard_negative -> benign)
  * provenance {source, license, notes}; licence in the allowlist; notes carry "style: ..."
  * "resembles" present exactly on hard_negative entries, and names an attack category
  * "before"/"after" present on every rug_pull and every hard_negative resembling rug_pull
    (and nowhere else); they are MCP tool definitions; rug_pull before != after (an "after"
    array repeating a name counts as drift); rug_pull hard negatives have before == after
    semantically (object key order ignored); top-level description == after description
  * optional fields (server, tool, input_schema) have the right types
  * hidden-Unicode / encoded styles really contain what they claim
  * entries sourced from the real corpus match a server package@version, licence and tool
    description in corpus.json (when the corpus file exists)
  * composition minimums from the dataset brief
Standard library only.
"""
import argparse
import base64
import binascii
import collections
import json
import os
import re
import sys

ATTACKS = ("tool_poisoning", "prompt_injection", "shadowing", "rug_pull")
BENIGN = ("benign", "hard_negative")
PREFIX = {"tool_poisoning": "tp", "prompt_injection": "pi", "shadowing": "sh", "rug_pull": "rp",
          "benign": "bn", "hard_negative": "hn"}
LICENSES = {"MIT", "Apache-2.0", "BSD-2-Clause", "BSD-3-Clause", "CC0-1.0", "CC-BY-4.0", "self-authored"}
PARAPHRASE_SOURCES = {"invariantlabs-ai/mcp-injection-experiments", "harishsg993010/damn-vulnerable-MCP-server"}
TOOLDEF_KEYS = {"name", "description", "inputSchema", "annotations", "outputSchema", "title"}
ENTRY_KEYS = {"id", "description", "label", "category", "provenance", "server", "tool", "input_schema",
              "resembles", "before", "after"}
MINIMUMS = {"tool_poisoning": 14, "prompt_injection": 14, "shadowing": 12, "rug_pull": 12, "benign": 20,
            "hard_negative": 20}
MIN_PER_RESEMBLES = 5
MIN_TOTAL = 80
# v1 (issue 5): >= 40 per attack category, >= 20 hard negatives resembling each, >= 300 in all.
PROFILES = {
    "v0": {"version": "security_v0", "minimums": MINIMUMS, "per_resembles": MIN_PER_RESEMBLES, "total": MIN_TOTAL},
    "v1": {"version": "security_v1",
           "minimums": {"tool_poisoning": 40, "prompt_injection": 40, "shadowing": 40, "rug_pull": 40,
                        "benign": 60, "hard_negative": 80},
           "per_resembles": 20, "total": 300},
}
PROFILE = PROFILES["v0"]

ZERO_WIDTH = {"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"}
BIDI = {"\u202a", "\u202b", "\u202c", "\u202d", "\u202e", "\u2066", "\u2067", "\u2068", "\u2069"}


def is_tag(ch):
    return 0xE0000 <= ord(ch) <= 0xE007F


def all_text(entry):
    """Every string reachable from the entry's tool-facing fields."""
    out = []

    def walk(v):
        if isinstance(v, str):
            out.append(v)
        elif isinstance(v, dict):
            for k, x in v.items():
                out.append(k)
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for key in ("description", "input_schema", "before", "after"):
        if key in entry:
            walk(entry[key])
    return "\n".join(out)


def styles_of(entry):
    notes = entry.get("provenance", {}).get("notes", "") or ""
    m = re.search(r"style:\s*([^;]*)", notes)
    if not m:
        return []
    return [s.strip() for s in m.group(1).split(",") if s.strip()]


def family(style):
    head = style.split("-", 1)[0]
    return head + "-*" if head in ("multilingual", "unicode", "encoded") else style


def is_subtle(entry):
    return "difficulty: subtle" in (entry.get("provenance", {}).get("notes", "") or "")


def check_tooldef(d, where, errs):
    if not isinstance(d, dict):
        errs.append(f"{where}: tool definition must be an object")
        return
    extra = set(d) - TOOLDEF_KEYS
    if extra:
        errs.append(f"{where}: unknown tool-definition keys {sorted(extra)}")
    if not isinstance(d.get("name"), str) or not d.get("name"):
        errs.append(f"{where}: missing name")
    if not isinstance(d.get("description"), str):
        errs.append(f"{where}: missing description")
    schema = d.get("inputSchema")
    if not isinstance(schema, dict) or schema.get("type") != "object":
        errs.append(f"{where}: inputSchema must be an object schema")
    for k in ("annotations", "outputSchema"):
        if k in d and not isinstance(d[k], dict):
            errs.append(f"{where}: {k} must be an object")
    if "title" in d and not isinstance(d["title"], str):
        errs.append(f"{where}: title must be a string")


def defs_of(after):
    return after if isinstance(after, list) else [after]


def check_before_after(e, errs):
    eid = e["id"]
    before, after = e.get("before"), e.get("after")
    if before is None or after is None:
        errs.append(f"{eid}: before/after required")
        return
    check_tooldef(before, f"{eid}.before", errs)
    if isinstance(after, list):
        if len(after) < 2:
            errs.append(f"{eid}: an 'after' array must hold at least two definitions")
        for i, d in enumerate(after):
            check_tooldef(d, f"{eid}.after[{i}]", errs)
        names = {d.get("name") for d in after if isinstance(d, dict)}
        if len(names) != 1:
            errs.append(f"{eid}: 'after' array must repeat one tool name (ambiguous tools/list)")
    else:
        check_tooldef(after, f"{eid}.after", errs)
    if not isinstance(before, dict) or not all(isinstance(d, dict) for d in defs_of(after)):
        return
    for d in defs_of(after):
        if d.get("name") != before.get("name"):
            errs.append(f"{eid}: before/after names differ ({before.get('name')} vs {d.get('name')})")
    first = defs_of(after)[0]
    if e.get("description") != first.get("description"):
        errs.append(f"{eid}: top-level description must equal the after description")
    if "tool" in e and e["tool"] != first.get("name"):
        errs.append(f"{eid}: tool field differs from after.name")
    if e["category"] == "rug_pull":
        if not isinstance(after, list) and before == after:
            errs.append(f"{eid}: rug_pull with no semantic change between before and after")
    else:  # hard negative resembling rug_pull
        if isinstance(after, list):
            errs.append(f"{eid}: rug_pull hard negative must not use an ambiguous 'after' array")
        elif before != after and "hn-benign-update" not in styles_of(e):  # dict equality ignores key order
            errs.append(f"{eid}: rug_pull hard negative must have semantically identical before/after "
                        "(or say style hn-benign-update for a legitimate, harmless change)")


def b64_payloads(text):
    found = []
    for tok in re.findall(r"[A-Za-z0-9+/]{24,}={0,2}", text):
        try:
            raw = base64.b64decode(tok, validate=True)
            s = raw.decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            continue
        if s.isprintable():
            found.append(s)
    return found


def hex_payloads(text):
    found = []
    for tok in re.findall(r"\b(?:[0-9a-f]{2}){12,}\b", text):
        try:
            s = bytes.fromhex(tok).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            continue
        if s.isprintable():
            found.append(s)
    return found


def check_styles(e, errs):
    eid = e["id"]
    st = styles_of(e)
    if not st:
        errs.append(f"{eid}: provenance.notes must contain 'style: ...'")
        return
    text = all_text(e)
    if "unicode-zero-width" in st and not any(c in ZERO_WIDTH for c in text):
        errs.append(f"{eid}: style unicode-zero-width but no zero-width character present")
    if "unicode-bidi" in st and not any(c in BIDI for c in text):
        errs.append(f"{eid}: style unicode-bidi but no bidi control present")
    if "unicode-tag" in st and not any(is_tag(c) for c in text):
        errs.append(f"{eid}: style unicode-tag but no U+E00xx tag character present")
    if "encoded-base64" in st and not b64_payloads(text):
        errs.append(f"{eid}: style encoded-base64 but no decodable base64 text found")
    if "encoded-hex" in st and not hex_payloads(text):
        errs.append(f"{eid}: style encoded-hex but no decodable hex text found")
    if e.get("label") == "benign":
        # Benign entries must not smuggle invisible characters.
        bad = [c for c in text if c in ZERO_WIDTH or c in BIDI or is_tag(c)]
        if bad:
            errs.append(f"{eid}: benign entry contains hidden Unicode {sorted({hex(ord(c)) for c in bad})}")


def load_corpus(path):
    if not path or not os.path.exists(path):
        return None
    with open(path, encoding="utf-8") as f:
        c = json.load(f)
    servers = {}
    for s in c.get("servers", []):
        servers[f"{s['package']}@{s['version']}"] = s
    tools = {(t["server"], t["tool"]): t for t in c.get("tools", [])}
    return servers, tools


def check(data, corpus):
    errs = []
    if not isinstance(data, dict):
        return ["top level must be an object"], []
    if data.get("version") != PROFILE["version"]:
        errs.append(f"version must be {PROFILE['version']!r}")
    entries = data.get("entries")
    if not isinstance(entries, list) or not entries:
        return errs + ["'entries' must be a non-empty list"], []
    seen = set()
    for i, e in enumerate(entries):
        if not isinstance(e, dict):
            errs.append(f"entries[{i}]: not an object")
            continue
        eid = e.get("id")
        if not isinstance(eid, str):
            errs.append(f"entries[{i}]: missing id")
            continue
        if eid in seen:
            errs.append(f"{eid}: duplicate id")
        seen.add(eid)
        extra = set(e) - ENTRY_KEYS
        if extra:
            errs.append(f"{eid}: unknown keys {sorted(extra)}")
        cat, label = e.get("category"), e.get("label")
        if cat not in ATTACKS + BENIGN:
            errs.append(f"{eid}: unknown category {cat!r}")
            continue
        if not re.fullmatch(PREFIX[cat] + r"-\d{3}", eid):
            errs.append(f"{eid}: id must look like {PREFIX[cat]}-NNN for category {cat}")
        want = "malicious" if cat in ATTACKS else "benign"
        if label != want:
            errs.append(f"{eid}: category {cat} requires label {want}, got {label!r}")
        if not isinstance(e.get("description"), str) or not e["description"].strip():
            errs.append(f"{eid}: description must be a non-empty string")
        pv = e.get("provenance")
        if not isinstance(pv, dict) or not all(isinstance(pv.get(k), str) and pv.get(k) for k in ("source", "license")):
            errs.append(f"{eid}: provenance needs source and license")
        else:
            if pv["license"] not in LICENSES:
                errs.append(f"{eid}: licence {pv['license']!r} not in allowlist")
            if (pv["source"] == "self-authored") != (pv["license"] == "self-authored"):
                errs.append(f"{eid}: source and license must both be self-authored or neither")
            if pv["source"] in PARAPHRASE_SOURCES and "paraphrased" not in pv.get("notes", ""):
                errs.append(f"{eid}: entries modeled on {pv['source']} must say 'paraphrased'")
        if cat == "hard_negative":
            if e.get("resembles") not in ATTACKS:
                errs.append(f"{eid}: hard_negative needs resembles in {ATTACKS}")
        elif "resembles" in e:
            errs.append(f"{eid}: resembles is only allowed on hard_negative entries")
        needs_ba = cat == "rug_pull" or (cat == "hard_negative" and e.get("resembles") == "rug_pull")
        if needs_ba:
            check_before_after(e, errs)
        elif "before" in e or "after" in e:
            errs.append(f"{eid}: before/after only belong on rug_pull entries and their hard negatives")
        for k in ("server", "tool"):
            if k in e and (not isinstance(e[k], str) or not e[k]):
                errs.append(f"{eid}: {k} must be a non-empty string")
        if "input_schema" in e and (not isinstance(e["input_schema"], dict) or e["input_schema"].get("type") != "object"):
            errs.append(f"{eid}: input_schema must be an object schema")
        check_styles(e, errs)
        if corpus is not None and isinstance(pv, dict) and "@" in pv.get("source", "")[1:]:
            servers, tools = corpus
            srv = servers.get(pv["source"])
            if srv is None:
                errs.append(f"{eid}: source {pv['source']} is not a server in corpus.json")
            else:
                if srv.get("license") != pv.get("license"):
                    errs.append(f"{eid}: licence differs from corpus.json ({srv.get('license')})")
                t = tools.get((e.get("server"), e.get("tool")))
                if t is None or e.get("server") != srv["name"]:
                    errs.append(f"{eid}: {e.get('server')}:{e.get('tool')} not found in corpus.json under {srv['name']}")
                else:
                    if t.get("description") != e.get("description"):
                        errs.append(f"{eid}: description differs from corpus.json")
                    if "input_schema" in e and t.get("schema") != e["input_schema"]:
                        errs.append(f"{eid}: input_schema differs from corpus.json")
    return errs, entries


def composition_errors(entries):
    errs = []
    cats = collections.Counter(e.get("category") for e in entries)
    for cat, n in PROFILE["minimums"].items():
        if cats[cat] < n:
            errs.append(f"composition: {cat} has {cats[cat]}, need >= {n}")
    res = collections.Counter(e.get("resembles") for e in entries if e.get("category") == "hard_negative")
    for a in ATTACKS:
        if res[a] < PROFILE["per_resembles"]:
            errs.append(f"composition: hard negatives resembling {a}: {res[a]}, need >= {PROFILE['per_resembles']}")
    if len(entries) < PROFILE["total"]:
        errs.append(f"composition: {len(entries)} entries, need >= {PROFILE['total']}")
    return errs


def report(entries):
    def table(title, counter):
        print(f"\n{title}")
        for k, n in sorted(counter.items(), key=lambda kv: (-kv[1], str(kv[0]))):
            print(f"  {n:4d}  {k}")

    cats = collections.Counter(e["category"] for e in entries)
    labels = collections.Counter(e["label"] for e in entries)
    print(f"entries: {len(entries)}  (malicious {labels['malicious']}, benign {labels['benign']})")
    print("\nper category")
    for cat in ATTACKS + BENIGN:
        print(f"  {cats[cat]:4d}  {cat}")
    table("hard negatives per resembles", collections.Counter(
        e["resembles"] for e in entries if e["category"] == "hard_negative"))
    mal = [e for e in entries if e["label"] == "malicious"]
    subtle = [e for e in mal if is_subtle(e)]
    print(f"\nsubtle malicious entries: {len(subtle)}/{len(mal)} ({100.0 * len(subtle) / max(1, len(mal)):.0f}%)")
    per_cat_subtle = collections.Counter(e["category"] for e in subtle)
    for cat in ATTACKS:
        print(f"  {per_cat_subtle[cat]:4d}  {cat}")
    only_schema = [e["id"] for e in mal if "schema-only" in styles_of(e)]
    print(f"malicious entries whose payload is only in a schema: {len(only_schema)}")
    arrays = [e["id"] for e in entries if isinstance(e.get("after"), list)]
    print(f"rug_pull entries with an ambiguous 'after' array: {', '.join(arrays) or 'none'}")
    table("style families (malicious; multilingual-*, unicode-*, encoded-* merged)",
          collections.Counter(f for e in mal for f in {family(s) for s in styles_of(e)}))
    table("styles (malicious)", collections.Counter(s for e in mal for s in styles_of(e)))
    table("styles (benign + hard_negative)", collections.Counter(
        s for e in entries if e["label"] == "benign" for s in styles_of(e)))
    table("provenance sources", collections.Counter(e["provenance"]["source"] for e in entries))
    table("licences", collections.Counter(e["provenance"]["license"] for e in entries))
    hidden = collections.Counter()
    for e in entries:
        text = all_text(e)
        if any(c in ZERO_WIDTH for c in text):
            hidden["zero-width"] += 1
        if any(c in BIDI for c in text):
            hidden["bidi"] += 1
        if any(is_tag(c) for c in text):
            hidden["tag"] += 1
        if any(c.isalpha() and ord(c) > 0x024F for c in text):
            hidden["non-Latin letters (CJK, Cyrillic, ...)"] += 1
    table("entries containing special characters", hidden)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    v0 = os.path.join(os.path.dirname(here), "v0")
    ap = argparse.ArgumentParser(description="Validate the evalgate security corpus.")
    ap.add_argument("--security", default=os.path.join(v0, "security.json"))
    ap.add_argument("--corpus", default=os.path.join(v0, "corpus.json"),
                    help="real tool corpus used to verify entries sourced from it (skipped if absent)")
    ap.add_argument("--quiet", action="store_true", help="print only errors and the verdict")
    ap.add_argument("--profile", choices=sorted(PROFILES), default="v0",
                    help="version and composition minimums to enforce (default v0)")
    ap.add_argument("--partial", action="store_true",
                    help="skip the composition minimums (for checking one authoring shard)")
    args = ap.parse_args()
    global PROFILE
    PROFILE = PROFILES[args.profile]
    try:
        with open(args.security, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, json.JSONDecodeError) as exc:
        print(f"FAIL: cannot load {args.security}: {exc}")
        return 1
    corpus = load_corpus(args.corpus)
    errs, entries = check(data, corpus)
    if not errs and not args.partial:
        errs += composition_errors(entries)
    if not errs and not args.quiet:
        report(entries)
        if corpus is None:
            print(f"\nnote: {args.corpus} not found; corpus-sourced entries were not cross-checked")
    for err in errs:
        print("ERROR:", err)
    print(f"\n{'FAIL' if errs else 'OK'}: {args.security}: {len(errs)} error(s)")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())

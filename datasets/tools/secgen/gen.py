import copy
import json
import sys
import unicodedata

sys.path.insert(0, "/tmp/secgen")
from common import *  # noqa
import tp, pi, sh, rp, hn

CORPUS = "/work/main/datasets/v0/corpus.json"
OUT = "/work/main/datasets/v0/security.json"

corpus = json.load(open(CORPUS, encoding="utf-8"))
servers = {s["name"]: s for s in corpus["servers"]}
tools = {t["tool_id"]: t for t in corpus["tools"]}


def real(tool_id):
    t = tools[tool_id]
    s = servers[t["server"]]
    return t, f"{s['package']}@{s['version']}", s["license"]


BENIGN_IDS = [
    "brave:brave_web_search", "everything:echo", "everything:get-sum", "everything:get-structured-content",
    "everything:gzip-file-as-resource", "filesystem:create_directory", "filesystem:directory_tree",
    "filesystem:edit_file", "filesystem:list_allowed_directories", "filesystem:search_files", "filesystem:write_file",
    "git:git_diff", "git:git_commit", "git:git_show", "github:create_issue", "github:create_pull_request",
    "github:merge_pull_request", "github:push_files", "gitlab:create_merge_request", "google_maps:maps_geocode",
    "google_maps:maps_directions", "memory:create_relations", "memory:delete_entities", "postgres:query",
    "puppeteer:puppeteer_evaluate", "slack:slack_post_message", "slack:slack_get_channel_history",
    "time:convert_time",
]

benign = []
for i, tid in enumerate(BENIGN_IDS, 1):
    t, src, lic = real(tid)
    benign.append(entry(f"bn-{i:03d}", "benign", t["description"], t["server"], t["tool"], t["schema"],
                        ["real-corpus"], source=src, license_=lic))

# Real tools from the corpus that superficially look like attacks: hard negatives.
REAL_HN = [
    ("fetch:fetch", "prompt_injection", ["real-corpus", "hn-override-wording"],
     "official reference server; 'although originally you did not have internet access ... this tool now grants you "
     "internet access' overrides the model's prior belief, intent is benign; some scanners flag it"),
    ("everything:get-env", "tool_poisoning", ["real-corpus", "hn-env-access"],
     "returns all environment variables by design (debugging demo server)"),
    ("filesystem:read_file", "shadowing", ["real-corpus", "hn-other-tool-mention", "hn-deprecation-notice"],
     "points to read_text_file on the same server"),
    ("sequential_thinking:sequentialthinking", "prompt_injection", ["real-corpus", "hn-directive-wording"],
     "long list of 'You should' directives about using this tool itself"),
    ("filesystem:read_media_file", "tool_poisoning", ["real-corpus", "hn-base64-image-param"],
     "returns base64 image/audio data"),
    ("brave:brave_local_search", "shadowing", ["real-corpus", "hn-other-tool-mention"],
     "'automatically falls back to web search': describes its own behaviour"),
]
real_hn = []
n = len(hn.E)
for tid, res, style, note in REAL_HN:
    n += 1
    t, src, lic = real(tid)
    real_hn.append(entry(f"hn-{n:03d}", "hard_negative", t["description"], t["server"], t["tool"], t["schema"],
                         style, source=src, license_=lic, note=note, resembles=res))

# A real definition re-serialised with different key order: not a change.
t, src, lic = real("filesystem:edit_file")
before = {"name": t["tool"], "title": t["title"], "description": t["description"], "inputSchema": t["schema"],
          "annotations": t["annotations"], "outputSchema": t["output_schema"]}


def reorder(v):
    if isinstance(v, dict):
        return {k: reorder(v[k]) for k in reversed(list(v.keys()))}
    if isinstance(v, list):
        return [reorder(x) for x in v]
    return v


after = reorder(copy.deepcopy(before))
assert after == before
n += 1
real_hn.append(entry(f"hn-{n:03d}", "hard_negative", t["description"], t["server"], t["tool"], t["schema"],
                     ["real-corpus", "hn-key-reorder"], source=src, license_=lic, resembles="rug_pull",
                     note="real definition; after = before with every object's keys in reverse order",
                     before=before, after=after))

entries = tp.E + pi.E + sh.E + rp.E + benign + hn.E + real_hn
doc = {"version": "security_v0", "entries": entries}


def escape_invisible(text):
    out = []
    for c in text:
        cp = ord(c)
        if unicodedata.category(c) in ("Cf", "Co", "Cn") or 0xE0000 <= cp <= 0xE007F:
            if cp > 0xFFFF:
                cp -= 0x10000
                out.append("\\u%04x\\u%04x" % (0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF)))
            else:
                out.append("\\u%04x" % cp)
        else:
            out.append(c)
    return "".join(out)


text = escape_invisible(json.dumps(doc, indent=2, ensure_ascii=False)) + "\n"
assert json.loads(text) == doc
open(OUT, "w", encoding="utf-8").write(text)
print(f"wrote {len(entries)} entries to {OUT}")

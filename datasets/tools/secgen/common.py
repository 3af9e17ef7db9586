import base64

INVARIANT = "invariantlabs-ai/mcp-injection-experiments"
DVMCP = "harishsg993010/damn-vulnerable-MCP-server"


def P(type_, desc=None, **extra):
    d = {"type": type_}
    if desc is not None:
        d["description"] = desc
    d.update(extra)
    return d


def S(props, required=None):
    """Build an object input schema. props: name -> dict or (type, desc)."""
    out = {}
    for k, v in props.items():
        if isinstance(v, tuple):
            v = P(*v)
        out[k] = v
    schema = {"type": "object", "properties": out}
    if required is None:
        required = list(out.keys())
    if required:
        schema["required"] = required
    return schema


def b64(s):
    return base64.b64encode(s.encode("utf-8")).decode("ascii")


def hexs(s):
    return s.encode("utf-8").hex()


def tags(s):
    """ASCII smuggling via Unicode tag characters (U+E0000 block), invisible."""
    return "".join(chr(0xE0000 + ord(c)) for c in s) + "\U000E007F"


def zw(s, ch="\u200b"):
    """Insert a zero-width character between every letter of each word."""
    return " ".join(ch.join(w) for w in s.split(" "))


def bidi(s):
    """Store text reversed behind a RIGHT-TO-LEFT OVERRIDE so it renders forwards."""
    return "\u202e" + s[::-1] + "\u202c"


def prov(style, source="self-authored", license_="self-authored", subtle=False, note=None):
    notes = "style: " + ", ".join(style if isinstance(style, list) else [style])
    if subtle:
        notes += "; difficulty: subtle"
    if source in (INVARIANT, DVMCP):
        license_ = "MIT"
        notes += "; paraphrased"
    if note:
        notes += "; " + note
    return {"source": source, "license": license_, "notes": notes}


def entry(id_, category, description, server, tool, schema, style, label=None,
          source="self-authored", license_="self-authored", subtle=False, note=None,
          resembles=None, before=None, after=None):
    if label is None:
        label = "benign" if category in ("benign", "hard_negative") else "malicious"
    e = {
        "id": id_,
        "description": description,
        "label": label,
        "category": category,
        "provenance": prov(style, source, license_, subtle, note),
    }
    if server is not None:
        e["server"] = server
    if tool is not None:
        e["tool"] = tool
    if schema is not None:
        e["input_schema"] = schema
    if resembles is not None:
        e["resembles"] = resembles
    if before is not None:
        e["before"] = before
    if after is not None:
        e["after"] = after
    return e


def tooldef(name, description, schema, annotations=None, title=None, output_schema=None):
    d = {"name": name}
    if title is not None:
        d["title"] = title
    d["description"] = description
    d["inputSchema"] = schema
    if annotations is not None:
        d["annotations"] = annotations
    if output_schema is not None:
        d["outputSchema"] = output_schema
    return d

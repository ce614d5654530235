"""Stands in for tools/dsl_export.py in the generator's tests: for each artifact of a plan,
writes PREFIX.cubin (a tiny ELF64 file whose symbol table holds the kernel's name as a
function, and `a_variable` as an object) and the sidecar PREFIX.json that the exporter would.

    python3 make_artifacts.py PLAN OUTDIR
"""
import hashlib
import json
import os
import struct
import sys


def elf(symbol):
    names = b"\0" + symbol.encode() + b"\0a_variable\0"
    text = b"\0" * 16
    sym = struct.pack("<IBBHQQ", 0, 0, 0, 0, 0, 0)
    sym += struct.pack("<IBBHQQ", 1, 0x12, 0, 3, 0, 16)  # GLOBAL FUNC in section 3
    sym += struct.pack("<IBBHQQ", 2 + len(symbol), 0x11, 0, 3, 0, 8)  # GLOBAL OBJECT
    off_str = 64
    off_sym = off_str + len(names)
    off_sym += (-off_sym) % 8
    off_text = off_sym + len(sym)
    off_sh = off_text + len(text)
    body = bytearray(off_sh)
    body[off_str:off_str + len(names)] = names
    body[off_sym:off_sym + len(sym)] = sym
    body[off_text:off_text + len(text)] = text

    def sh(name, typ, off, size, link, entsize):
        return struct.pack("<IIQQQQIIQQ", name, typ, 0, 0, off, size, link, 0, 1, entsize)

    shdrs = sh(0, 0, 0, 0, 0, 0) + sh(0, 3, off_str, len(names), 0, 0)
    shdrs += sh(0, 2, off_sym, len(sym), 1, 24) + sh(0, 1, off_text, len(text), 0, 0)
    ident = b"\x7fELF" + bytes([2, 1, 1]) + b"\0" * 9
    header = ident + struct.pack("<HHIQQQIHHHHHH", 2, 190, 1, 0, 0, off_sh, 0, 64, 0, 0, 64,
                                 4, 0)
    body[0:64] = header
    return bytes(body) + shdrs


def main():
    plan = json.load(open(sys.argv[1]))
    out = sys.argv[2]
    os.makedirs(out, exist_ok=True)
    for a in plan["artifacts"]:
        image = elf(a["kernel"])
        with open(os.path.join(out, a["prefix"] + ".cubin"), "wb") as f:
            f.write(image)
        source = open(a["source"], "rb").read()
        name, version = a["compiler"].split("==")
        pointers = [p[0] for p in a["signature"] if p[1].startswith("*")]
        side = {
            "version": 1, "prefix": a["prefix"], "kind": "triton-cubin", "decl": a["decl"],
            "point": a["point"], "arch": a["arch"], "capability": a["capability"],
            "symbol": a["kernel"], "shared": 0, "num_warps": a["num_warps"],
            "num_stages": a["num_stages"], "num_ctas": 1, "params": a["signature"],
            "hidden": [{"name": "global_scratch", "size": 0, "align": 1},
                       {"name": "profile_scratch", "size": 0, "align": 1}],
            "assumes": {"divisibility_16": pointers, "int32": []},
            "compiler": {"name": name, "version": version},
            "sources": {a["source_key"]: hashlib.sha256(source).hexdigest()},
            "binary": {"file": a["prefix"] + ".cubin",
                       "sha256": hashlib.sha256(image).hexdigest()},
        }
        with open(os.path.join(out, a["prefix"] + ".json"), "w") as f:
            json.dump(side, f, indent=1)
            f.write("\n")


main()

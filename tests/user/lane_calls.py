#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The data lane and discovery never reach code that attaches (user/README.md).

collect/ (records into the capture) and discover/ (facts about processes
and files) place no probe and write no kernel table, directly or through
anything they call: the attach controller (attach/) does. An include test
cannot see a call that runs through a function pointer (the collector
calling a callback the control lane handed it, which places a probe).
This check reads the call graph instead, from each source file's LLVM IR
(clang -S -emit-llvm):

- direct calls are edges;
- an indirect call may reach any function whose address is taken anywhere
  (stored, put in a table, passed) and whose IR type matches the call's;
- a function handed to a library call (qsort, pthread_create) may be
  called by it.

It fails when any function defined in a checked folder reaches a sink:
libbpf's calls that place or remove a probe or write a kernel table. Each
path found is printed, caller first.

    lane_calls.py [--src user] [--folders collect,discover] [--cflags="-I..."] [--keep DIR]

Exit 0: no path; 1: a path (printed); 2: the IR could not be made.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from collections import defaultdict, deque
from concurrent.futures import ThreadPoolExecutor

# libbpf's calls that change what the kernel runs or holds for us.
SINKS = re.compile(
    r"^(bpf_program__attach\w*|bpf_link_create|bpf_link__(destroy|detach|update_program)"
    r"|bpf_prog_(attach|detach)\w*|bpf_raw_tracepoint_open\w*"
    r"|bpf_map_(update|delete)_elem\w*|bpf_map__(update|delete)_elem"
    r"|bpf_map_lookup_and_delete\w*|bpf_map__lookup_and_delete\w*)$")

DEFINE = re.compile(r"^define\s+(.*?)@([\w.$]+)\((.*)\)[^(]*\{\s*$")
GLOBAL_FN = re.compile(r"@([\w.$]+)")
# call/invoke: "call <ret> [(<params>)] <callee>(<args>)"
CALL = re.compile(r"\b(?:tail\s+|musttail\s+|notail\s+)?(?:call|invoke)\b(.*)$")


def strip_attrs(ty):
    """An IR type list without parameter attributes and names."""
    out = []
    for part in split_top(ty):
        part = part.strip()
        if not part:
            continue
        if part == "...":
            out.append(part)
            continue
        toks = part.split()
        # The type is the first token(s) up to an attribute or a value name.
        kept = []
        for t in toks:
            if t.startswith("%") and kept and not t.startswith("%struct.") and \
                    not t.startswith("%union.") and not kept[-1].endswith(","):
                break       # a value name: the rest is not the type
            if re.match(r"^(noundef|nonnull|readonly|writeonly|nocapture|signext|zeroext|"
                        r"byval|sret|align|dereferenceable|noalias|returned|inreg|"
                        r"immarg|noreturn)\b", t):
                break
            kept.append(t)
        out.append(" ".join(kept))
    return ",".join(out)


def split_top(s):
    """Splits @s at the commas outside brackets."""
    parts, depth, cur = [], 0, []
    for ch in s:
        if ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def ret_type(prefix):
    """The return type in a define's or a call's prefix."""
    words = [w for w in prefix.split() if not re.match(
        r"^(dso_local|internal|private|hidden|protected|default|weak|linkonce_odr|"
        r"available_externally|noundef|nonnull|zeroext|signext|fastcc|ccc|"
        r"local_unnamed_addr|unnamed_addr|noalias|inreg|dereferenceable\S*|align|\d+)$", w)]
    return " ".join(words)


def matching_paren(s, start):
    depth = 0
    for i in range(start, len(s)):
        if s[i] == "(":
            depth += 1
        elif s[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


class Graph:
    def __init__(self):
        self.defined = {}                   # key -> (file, name)
        self.sig = {}                       # key -> type signature
        self.calls = defaultdict(set)       # key -> {callee key or extern name}
        self.indirect = defaultdict(set)    # key -> {signature}
        self.address_taken = defaultdict(set)   # signature -> {key}
        self.passes = defaultdict(set)      # key -> {(callee name, function passed)}

    def resolve_passes(self):
        """A function handed to a library's call may be called by it."""
        ours = {name for _, name in self.defined.values()}
        for caller, passes in self.passes.items():
            for callee, passed in passes:
                if callee not in ours and not callee.startswith("llvm."):
                    self.calls[caller].add(passed)

    def key(self, file, name, internal_names):
        return f"{file}:{name}" if name in internal_names else name


def parse_ll(path, file, g):
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().splitlines()
    internal = set()
    sigs = {}
    for line in lines:
        m = DEFINE.match(line)
        if m:
            if re.search(r"\b(internal|private)\b", m.group(1)):
                internal.add(m.group(2))
            params = strip_attrs(m.group(3))
            sigs[m.group(2)] = f"{ret_type(m.group(1))}({params})"
        elif line.startswith("declare "):
            d = re.match(r"^declare\s+(.*?)@([\w.$]+)\((.*)\)", line)
            if d:
                sigs.setdefault(d.group(2), f"{ret_type(d.group(1))}({strip_attrs(d.group(3))})")
    k = lambda name: g.key(file, name, internal)
    for name, sig in sigs.items():
        g.sig.setdefault(k(name), sig)

    def take_address(name):
        if name in sigs:
            g.address_taken[sigs[name]].add(k(name))

    current = None
    for line in lines:
        m = DEFINE.match(line)
        if m:
            current = k(m.group(2))
            g.defined[current] = (file, m.group(2))
            continue
        if line.startswith("}"):
            current = None
            continue
        if current is None:
            # Globals: a function in an initializer has its address taken.
            if line.startswith("@"):
                for name in GLOBAL_FN.findall(line.split("=", 1)[1] if "=" in line else ""):
                    take_address(name)
            continue
        c = CALL.search(line)
        if not c:
            for name in GLOBAL_FN.findall(line):
                take_address(name)
            continue
        rest = c.group(1)
        callee = re.search(r"(@[\w.$]+|%[\w.$]+)\(", rest)
        if not callee:
            continue
        open_at = callee.end() - 1
        close_at = matching_paren(rest, open_at)
        args = rest[open_at + 1:close_at] if close_at > 0 else ""
        target = callee.group(1)
        if target.startswith("@"):
            name = target[1:]
            g.calls[current].add(k(name) if name in sigs else name)
            # A function passed as an argument may be called back: by
            # its signature if the callee is ours, by the library if not
            # (resolved once every file is read).
            for passed in GLOBAL_FN.findall(args):
                if passed in sigs:
                    take_address(passed)
                    g.passes[current].add((name, k(passed)))
        else:
            head = rest[:callee.start()]
            explicit = re.search(r"\((.*)\)\s*$", head)
            rt = ret_type(head.split("(")[0] if explicit else head)
            params = strip_attrs(explicit.group(1) if explicit else args)
            g.indirect[current].add(f"{rt}({params})")
            for passed in GLOBAL_FN.findall(args):
                take_address(passed)


def paths_to_sinks(g, roots):
    """Breadth-first from @roots; the shortest path to each sink reached."""
    parent = {}
    seen = set()
    queue = deque()
    for r in sorted(roots):
        seen.add(r)
        queue.append(r)
    found = []
    while queue:
        f = queue.popleft()
        nexts = set(g.calls.get(f, ()))
        for sig in g.indirect.get(f, ()):
            nexts |= g.address_taken.get(sig, set())
        for n in sorted(nexts):
            if n in seen:
                continue
            seen.add(n)
            parent[n] = f
            name = n.split(":")[-1]
            if n not in g.defined and SINKS.match(name):
                path = [n]
                while path[-1] in parent:
                    path.append(parent[path[-1]])
                found.append(list(reversed(path)))
                continue
            queue.append(n)
    return found


def emit_ir(sources, src_root, cflags, out):
    def one(src):
        rel = os.path.relpath(src, src_root)
        ll = os.path.join(out, rel.replace(os.sep, "__") + ".ll")
        cmd = ["clang", "-S", "-emit-llvm", "-O0", "-w", "-std=gnu11", "-D_GNU_SOURCE",
               *cflags, src, "-o", ll]
        r = subprocess.run(cmd, capture_output=True, text=True)
        return rel, ll, r
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        return list(ex.map(one, sources))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", default="user", help="the tree: one folder per concern")
    ap.add_argument("--folders", default="collect,discover",
                    help="folders that must not reach code that attaches, comma-separated")
    ap.add_argument("--skip", default="agent", help="folders not in the binary, comma-separated")
    ap.add_argument("--cflags", default="", help="include flags, as the Makefile gives them")
    ap.add_argument("--keep", help="write the IR here (kept) rather than in a temporary folder")
    a = ap.parse_args()

    checked = set(a.folders.split(","))
    skip = set(filter(None, a.skip.split(",")))
    sources = sorted(os.path.join(a.src, d, f)
                     for d in os.listdir(a.src) if os.path.isdir(os.path.join(a.src, d))
                     and d not in skip
                     for f in os.listdir(os.path.join(a.src, d)) if f.endswith(".c"))
    if not sources:
        print(f"lane_calls: no sources under {a.src}/", file=sys.stderr)
        return 2
    tmp = None
    out = a.keep
    if not out:
        tmp = tempfile.TemporaryDirectory(prefix="lane_calls.")
        out = tmp.name
    os.makedirs(out, exist_ok=True)
    g = Graph()
    failed = 0
    for rel, ll, r in emit_ir(sources, a.src, shlex.split(a.cflags), out):
        if r.returncode:
            print(f"lane_calls: clang could not read {rel}:\n{r.stderr.strip()}", file=sys.stderr)
            failed += 1
            continue
        parse_ll(ll, rel, g)
    if failed:
        return 2
    g.resolve_passes()
    roots = {k for k, (file, _) in g.defined.items() if file.split(os.sep)[0] in checked}
    if not roots:
        print(f"lane_calls: no function defined in {sorted(checked)}/", file=sys.stderr)
        return 2
    paths = paths_to_sinks(g, roots)
    for p in paths:
        print(f"FAIL: {g.defined[p[0]][0].split(os.sep)[0]}/ reaches " + p[-1] + ":\n    " + "\n -> ".join(
            (f"{g.defined[k][1]} ({g.defined[k][0]})" if k in g.defined else k) for k in p))
    indirect = sum(len(v) for v in g.indirect.values())
    print(f"lane_calls: {len(g.defined)} functions, {len(roots)} checked "
          f"({', '.join(d + '/' for d in sorted(checked))}), {indirect} indirect call types; "
          f"{len(paths)} path(s) to code that attaches")
    return 1 if paths else 0


if __name__ == "__main__":
    sys.exit(main())

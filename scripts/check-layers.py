#!/usr/bin/env python3
"""The layer check: prints the import graph of src/ and fails (exit 1) on
an import that points up the layers, or on a cycle between files.

    python3 scripts/check-layers.py [--files] [--root DIR]

(--root: check another tree than this repository's src/, as the tests do
with a small one made to break a rule.)

Layers, bottom to top (a file may import its own layer and those below):

    base < analysis < device < engine < measure < document < report < output < cli < commands < main

Edges are the `crate::...`, `super::...` and `$crate::...` paths a file
names, resolved to the file that defines that module. `#[cfg(test)]` code
and `pub mod x;` declarations are not edges. Extra rules (the check prints
them, with the graph):
  - analysis/, document/ and report/ are functions of their inputs: they
    name no syscall and no file, clock, socket, thread or running host
    (PURE_BANNED);
    the I/O is at the edges (device/, measure/, and the one output seam,
    output/);
  - clap (its paths, derives and attributes) in no layer below cli/;
  - the hot loop (measure/worker/) and engine/ know nothing of report,
    output, cli or document;
  - no argument synthesis: a run made by the program is built typed
    (cli::builder::RunBuilder), never written as a command line for clap
    to parse again. Outside main.rs, only the files in ARGV_PARSERS call
    clap's entry points on an argument vector (parse_from,
    try_parse_from, get_matches_from, try_get_matches_from, update_from,
    try_update_from), and only those in ARGV_BUILDERS write one: a
    "stripebench" literal followed by another string literal
    ("stripebench", "run", ...), or OsString::from("stripebench").
    String literals count here (a command line is made of them); comments
    and #[cfg(test)] code do not.
  - no judgement in document/ (the JSON contract and its assembly): the
    judgement (verdicts, thresholds, checks, significance tests) is
    functions of typed figures in analysis/. Checkably, outside
    `#[cfg(test)]` code a document/ file defines no floating-point
    constant (`const X: f64`/`f32`: a share, a floor, a factor is a
    threshold) and no `MIN_*`/`MAX_*` constant (a bound is a threshold),
    defines no `fn judge`, calls no statistical test (`mannwhitney::`)
    itself and gives no finding a severity of its own choosing
    (`severity: Severity::Medium`: the verdict from analysis/ carries it)
    (JUDGEMENT_BANNED).
  - contract types live in document/: outside it, no type derives
    serde's `Serialize` (SERDE_BANNED), so that what the JSON says is
    decided in one layer and the lower layers hand it plain typed facts
    (engine::EngineFacts, device::cache::CacheFacts, the RunConfig).
    The types still outside, each with why, are in SERDE_LEFT (file ->
    type -> reason); a new one fails, and one listed that no longer
    derives it must leave the list.
  - size (issue 40): every file under src/commands/ is under
    COMMAND_FILE_MAX lines (a command is a thin driver: what grows is a
    planner, a judge or a renderer, and goes to its layer or its own file);
    no function outside `#[cfg(test)]` code anywhere in src/ is over
    FN_MAX lines, counted from its `fn` line to its closing brace (a long
    function is steps without names: split it into named ones).
  - every line for the user goes through the output layer (issue 40 item
    5): outside output/, main.rs and `#[cfg(test)]` code, no file calls
    `println!`, `eprintln!`, `print!` or `eprint!` (PRINT_BANNED). A lower
    layer hands up a typed fact (a `Warning`, a `base::notice::Notice` for
    what must be said as it happens) and output/ writes it; the macros also
    panic when the stream is closed or full, which a diagnostic must not.
    The files still printing, each with why, are in PRINT_LEFT.
A file listed in PENDING, whose offence another branch removes, is printed
as pending instead of failing; the merge empties PENDING. A file listed in
JUDGEMENT_LEFT holds judgement issue 40 names and that is not yet moved:
printed, with what is left, instead of failing; a file that no longer
offends must leave the list, and any other file that offends fails.
SIZE_LEFT does the same for the sizes.
"""
import os
import re
import sys
from collections import defaultdict

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
if "--root" in sys.argv[:-1]:
    ROOT = sys.argv[sys.argv.index("--root") + 1]
LAYERS = ["base", "analysis", "device", "engine", "measure", "document", "report", "output", "store", "cli", "commands", "main"]

# Layers that are functions of their inputs, and what they may not name.
PURE = ("analysis", "document", "report")
PURE_BANNED = [
    ("libc::", "a syscall"),
    ("nix::", "a syscall"),
    ("std::fs", "file I/O"),
    ("File::", "file I/O"),
    ("OpenOptions", "file I/O"),
    ("std::os::unix::net", "a socket"),
    ("std::net", "a socket"),
    ("Instant", "a clock"),
    ("SystemTime", "a clock"),
    ("getrusage", "a clock"),
    ("clock_gettime", "a clock"),
    ("std::thread", "a thread"),
    # The machine's sysfs, procfs and /dev are found by the caller and
    # handed down (a survey's `sys`), never looked up here.
    ("Host::real", "the running host"),
]
# clap below cli: its paths, its derives and its attributes.
CLAP_BANNED = [
    (r"\bclap::", "clap::"),
    (r"\bValueEnum\b", "ValueEnum"),
    (r"#\[arg\(", "#[arg(...)]"),
    (r"#\[command\(", "#[command(...)]"),
    (r"#\[derive\([^)]*\b(Parser|Args|Subcommand|ValueEnum)\b", "a clap derive"),
]
# The hot loop and the engines know nothing of these.
HOT = (os.path.join("measure", "worker") + os.sep, "engine" + os.sep)
HOT_BANNED = ("report", "output", "cli", "document")

# Argument synthesis. The calls that parse an argument vector with clap,
# and what writing one for stripebench looks like.
ARGV_PARSE = r"\b(?:try_)?(?:parse_from|get_matches_from|update_from)\s*\("
ARGV_WRITE = r'"stripebench"\s*,\s*(?:[A-Za-z_:]+\(\s*)?"|OsString::from\(\s*"stripebench"\s*\)'
# The files (besides main.rs) that may parse an argument vector, and why.
ARGV_PARSERS = {
    os.path.join("cli", "front.rs"): "parses the process's own command line",
    os.path.join("cli", "help.rs"): "defines parse_from, clap's one entry (its messages rewritten)",
}
# The files (besides main.rs) that may write one, and why.
ARGV_BUILDERS = {}
# Judgement in document/ (see the header): what a document/ file may not
# define or call.
JUDGEMENT_BANNED = [
    (r"\bconst\s+[A-Z_0-9]+\s*:\s*f(32|64)\b", "a floating-point constant (a threshold)"),
    (r"\bconst\s+(MIN|MAX)_[A-Z_0-9]*\s*:", "a MIN_/MAX_ constant (a bound)"),
    (r"\bfn\s+judge\b", "a `fn judge` (a verdict)"),
    (r"\bmannwhitney::", "a statistical test (mannwhitney::)"),
    (r"\bseverity\s*:\s*Severity::(Info|Low|Medium|High)\b", "a severity literal for a finding (the verdict from analysis/ carries how much it matters)"),
]
# Judgement still in document/, not yet moved to analysis/ (file -> what is
# left): printed, not failed. Each entry goes when its file is moved.
JUDGEMENT_LEFT = {}

# Sizes (issue 40): a commands/ file's lines (fewer than), a function's
# lines outside tests (at most).
COMMAND_FILE_MAX = 200
FN_MAX = 150
# Sizes still over (file -> who splits it, and when): printed with what is
# over, not failed. Each entry goes when its file is split; an entry whose
# file is within both sizes fails, as a stale JUDGEMENT_LEFT one does.
SIZE_LEFT = {
}

# Printing outside the output layer (see the header): the macros, and the
# files (besides output/ and main.rs) that may still call them, and why.
PRINT_BANNED = r"(?<![A-Za-z0-9_])e?print(?:ln)?!"
PRINT_FREE = ("output" + os.sep, "main.rs")
PRINT_LEFT = {}

# Contract types outside document/: a `#[derive(..Serialize..)]` on a type.
SERDE_BANNED = r"#\[derive\([^)]*\bSerialize\b[^)]*\)\]\s*(?:#\[[^\]]*\]\s*)*(?:pub(?:\([a-z]+\))?\s+)?(?:struct|enum)\s+([A-Za-z_0-9]+)"
# The types outside document/ that still derive Serialize, and why (file ->
# {type: reason}). Option values, named in the JSON by their option's
# spelling, that the contract types in document/ hold as fields; base/'s
# shared vocabulary; and records that are no document. Every contract piece
# is in document/ (issue 40 item 3): a new one goes there too.
_OPTION = "an option's value, written by its option's spelling inside document/'s ConfigDoc or RingDoc"
_VOCAB = "base/'s shared vocabulary, serialized wherever a document holds it"
SERDE_LEFT = {
    "engine/mod.rs": {"EngineKind": _OPTION, "TaskRun": _OPTION, "Sched": _OPTION},
    "engine/buffer.rs": {"HugePages": _OPTION},
    "measure/config.rs": {"RwMode": _OPTION, "RateLimit": _OPTION},
    "base/io.rs": {"Region": _VOCAB},
    "base/invocation.rs": {"Invocation": _VOCAB + " (the command that made a document)", "ConfigFile": _VOCAB + " (the command that made a document)"},
    "base/warning.rs": {w: _VOCAB + " (issue 40 item 5 types warnings end to end)" for w in ("Warning", "Typed", "GroupedDoc")},
    "report/live.rs": {"Line": "the --live JSONL line: a report format of its own, not a document", "DirectionLine": "the --live JSONL line: a report format of its own, not a document"},
    "device/scratch.rs": {"Record": "the state directory's own record of a test bed, not a document"},
    "device/knobs.rs": {"Knob": "the state directory's record of a changed setting (issue 40 item 3 for its use in documents)"},
}

# Offences known and being removed elsewhere (file -> "who: what"): printed
# as pending, not failed. Empty: every rule holds for every file.
PENDING = {}

# The one file that names the host's /sys and /proc.
HOST_FILE = "base/host.rs"
RANK = {name: i for i, name in enumerate(LAYERS)}


def files():
    out = {}
    for d, _, names in os.walk(ROOT):
        for n in names:
            if n.endswith(".rs"):
                p = os.path.join(d, n)
                out[os.path.relpath(p, ROOT)] = p
    return out


def module_of(rel):
    """src-relative file -> module path list (lib.rs/main.rs -> [])."""
    parts = rel[:-3].split(os.sep)
    if parts[-1] in ("mod", "lib", "main"):
        parts = parts[:-1]
    return parts


def layer_of(rel):
    if rel in ("main.rs", "lib.rs"):
        return "main"
    return rel.split(os.sep)[0]


def strip_tests(text, keep_lines=False):
    """Drops `#[cfg(test)]` items: a test module to its closing brace, or
    the one item that follows the attribute (`keep_lines`: each dropped
    line left empty, so that the others keep their numbers)."""
    out, i = [], 0
    lines = text.split("\n")
    while i < len(lines):
        if lines[i].strip().startswith("#[cfg(test)]"):
            first = i
            depth, started, i = 0, False, i + 1
            while i < len(lines):
                depth += lines[i].count("{") - lines[i].count("}")
                started |= "{" in lines[i] or lines[i].rstrip().endswith(";")
                i += 1
                if started and depth <= 0:
                    break
            if keep_lines:
                out.extend([""] * (i - first))
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


def code_only(text):
    text = re.sub(r"//[^\n]*", "", text)  # comments, doc comments
    text = re.sub(r'"(\\.|[^"\\])*"', '""', text)  # string literals
    return text


def blank_literals(text):
    """`text` with every comment, string and char literal's contents blanked
    (newlines kept, so that line numbers and braces outside them stand):
    what a brace matcher may count."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif text.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif (m := re.match(r'b?r(#*)"', text[i:i + 260])) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = '"' + m.group(1)
            j = text.find(end, i + len(m.group(0)))
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            j += 1
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "'" and (m := re.match(r"'(?:\\u\{[0-9a-fA-F]+\}|\\.|[^\\'\n])'", text[i:i + 12])):
            out.append(" " * len(m.group(0)))
            i += len(m.group(0))
        else:
            out.append(c)
            i += 1
    return "".join(out)


def long_functions(raw):
    """(name, first line, lines) of every function in `raw` (tests already
    stripped) over FN_MAX lines, from its `fn` line to its closing brace. A
    function declared without a body (a trait's) is none."""
    text = blank_literals(raw)
    out = []
    for m in re.finditer(r"\bfn\s+([A-Za-z_][A-Za-z0-9_]*)", text):
        i, depth = m.end(), 0
        # The body's opening brace: the first `{` outside the signature's
        # parentheses and generics; a `;` first is a declaration.
        while i < len(text) and text[i] not in "{;":
            i += 1
        if i >= len(text) or text[i] == ";":
            continue
        j = i
        while j < len(text):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        first = text.count("\n", 0, m.start()) + 1
        lines = text.count("\n", m.start(), j) + 1
        if lines > FN_MAX:
            out.append((m.group(1), first, lines))
    return out


def test_only(fs):
    """Files declared `#[cfg(test)] mod x;`: test code, not part of the build."""
    out = set()
    for rel, path in fs.items():
        if os.path.basename(rel) not in ("mod.rs", "lib.rs"):
            continue
        for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))? )?mod ([a-z_0-9]+);", open(path).read()):
            d = os.path.dirname(rel)
            for cand in (os.path.join(d, m.group(1) + ".rs"), os.path.join(d, m.group(1), "mod.rs")):
                if cand in fs:
                    out.add(cand)
    return out


def print_left(title, found, listed, stale):
    """Prints the offences of the files `listed` (file -> why it is left),
    under `title`, each file's reason above its offences; the problems: a
    listed file with no offence left (`stale`, formatted with its name)."""
    left = [(f, m) for f, m in found if f in listed]
    if left:
        print(title)
        for f in sorted({f for f, _ in left}):
            print(f"  {f}: {listed[f]}")
            for g, m in left:
                if g == f:
                    print(f"    {m}")
    return [(None, stale.format(f)) for f in sorted(set(listed) - {f for f, _ in left})]


def main():
    show_files = "--files" in sys.argv
    fs = files()
    for rel in test_only(fs):
        del fs[rel]
    by_module = {tuple(module_of(rel)): rel for rel in fs if rel != "main.rs"}
    edges = defaultdict(set)
    texts = {}
    host_paths = []
    argv_problems = []
    for rel, path in fs.items():
        raw = strip_tests(open(path).read())
        text = code_only(raw)
        texts[rel] = text
        # Argument synthesis reads string literals: strip comments only.
        if rel != "main.rs":
            lits = re.sub(r"//[^\n]*", "", raw)
            if rel not in ARGV_PARSERS and re.search(ARGV_PARSE, lits):
                argv_problems.append((rel, f"{rel}: parses an argument vector with clap: only {', '.join(sorted(ARGV_PARSERS))} parse one; build a run with cli::builder::RunBuilder"))
            if rel not in ARGV_BUILDERS and re.search(ARGV_WRITE, lits):
                argv_problems.append((rel, f"{rel}: writes a stripebench command line: build the run typed (cli::builder::RunBuilder) instead"))
        # The host's roots are named once, in base/host.rs; a process's own
        # /proc/self is not the host's.
        if rel != HOST_FILE:
            for m in re.finditer(r'"/(sys|proc)(/[^"]*)?"', re.sub(r"//[^\n]*", "", raw)):
                if not (m.group(2) or "").startswith("/self/"):
                    host_paths.append((rel, f"{rel}: names {m.group(0)}: the host's roots come from base::host::Host"))
        here = module_of(rel)
        paths = []
        for m in re.finditer(r"(?:\$?crate|stripebench)::((?:[a-z_][a-z0-9_]*::)*[A-Za-z_][A-Za-z0-9_]*)", text):
            paths.append(m.group(1).split("::"))
        # use crate::x::{a, b::c} groups
        for m in re.finditer(r"use (?:crate|stripebench)::((?:[a-z_][a-z0-9_]*::)*)\{([^}]*)\}", text):
            base = [p for p in m.group(1).split("::") if p]
            for item in m.group(2).split(","):
                item = item.strip().split(" as ")[0]
                if item and item != "self":
                    paths.append(base + item.split("::"))
                elif item == "self":
                    paths.append(base)
        for m in re.finditer(r"\bsuper::((?:[a-z_][a-z0-9_]*::)*[A-Za-z_][A-Za-z0-9_]*)", text):
            parent = here[:-1] if os.path.basename(rel) != "mod.rs" else here[:-1]
            paths.append(parent + m.group(1).split("::"))
        for p in paths:
            # the longest prefix that is a file's module
            target = None
            for k in range(len(p), 0, -1):
                if tuple(p[:k]) in by_module:
                    target = by_module[tuple(p[:k])]
                    break
            if target and target != rel:
                edges[rel].add(target)
        # a mod.rs that calls into its own children: `child::` paths
        if os.path.basename(rel) in ("mod.rs", "lib.rs"):
            for m in re.finditer(r"(?<![:\w])([a-z_][a-z0-9_]*)::[A-Za-z_]", text):
                child = tuple(here + [m.group(1)])
                if child in by_module and by_module[child] != rel:
                    edges[rel].add(by_module[child])

    problems = list(host_paths) + argv_problems
    # Upward imports.
    for a, bs in sorted(edges.items()):
        for b in sorted(bs):
            la, lb = layer_of(a), layer_of(b)
            if lb == "main":
                continue  # lib.rs only declares the layers
            if RANK[lb] > RANK[la]:
                problems.append((a, f"upward import: {a} ({la}) -> {b} ({lb})"))
    # Extra rules.
    for rel, text in texts.items():
        layer = layer_of(rel)
        if layer in PURE:
            for bad, what in PURE_BANNED:
                if re.search(r"(?<![A-Za-z0-9_])" + re.escape(bad), text):
                    problems.append((rel, f"{rel}: {layer}/ names {what} ({bad}): it must be a function of its inputs"))
        if RANK[layer] < RANK["cli"]:
            for pat, what in CLAP_BANNED:
                if re.search(pat, text):
                    problems.append((rel, f"{rel}: {what} below cli: clap belongs to cli/"))
        if rel.startswith(HOT):
            for bad in HOT_BANNED:
                if re.search(r"\b(?:crate|super)::(?:[a-z_]+::)*" + bad + "::", text) or re.search(r"\bcrate::" + bad + r"\b", text):
                    problems.append((rel, f"{rel}: the hot loop and the engines must know nothing of {bad}"))
        if not (rel.startswith(PRINT_FREE) or rel in PRINT_LEFT):
            # Read again with the tests' lines kept blank, for the line numbers.
            kept = code_only(strip_tests(open(fs[rel]).read(), keep_lines=True))
            for m in re.finditer(PRINT_BANNED, kept):
                line = kept.count("\n", 0, m.start()) + 1
                problems.append((rel, f"{rel}: `{m.group(0)}` (line {line}) below the output layer: hand the line up as a Warning or a base::notice::Notice, which output/ writes"))
    judgement, seen = [], set()
    for rel, text in texts.items():
        if layer_of(rel) != "document":
            continue
        for pat, what in JUDGEMENT_BANNED:
            for m in re.finditer(pat, text):
                if (rel, m.start()) in seen:
                    continue  # one offence per place, however many rules it breaks
                seen.add((rel, m.start()))
                judgement.append((rel, f"{rel}: document/ defines or calls {what}: `{m.group(0)}`: judgement belongs in analysis/"))
    problems.extend((f, m) for f, m in judgement if f not in JUDGEMENT_LEFT)
    # Contract types outside document/.
    serde_seen = set()
    for rel, text in texts.items():
        if layer_of(rel) == "document":
            continue
        for m in re.finditer(SERDE_BANNED, text):
            name = m.group(1)
            serde_seen.add((rel, name))
            if name not in SERDE_LEFT.get(rel, {}):
                problems.append((rel, f"{rel}: `{name}` derives Serialize outside document/: a contract type belongs in document/, built there from plain facts this layer gives"))
    for f, names in sorted(SERDE_LEFT.items()):
        for name in sorted(names):
            if (f, name) not in serde_seen:
                problems.append((None, f"SERDE_LEFT lists {f} `{name}`, which derives no Serialize there now: drop it"))
    # Sizes: a command file's lines, a function's (outside tests).
    sizes = []
    for rel, path in sorted(fs.items()):
        raw = open(path).read()
        if layer_of(rel) == "commands":
            n = raw.count("\n") + (0 if raw.endswith("\n") or not raw else 1)
            if n >= COMMAND_FILE_MAX:
                sizes.append((rel, f"{rel}: {n} lines, a commands/ file has fewer than {COMMAND_FILE_MAX}: split what it owns into files of its own (or move it to its layer)"))
        for name, first, lines in long_functions(strip_tests(raw, keep_lines=True)):
            sizes.append((rel, f"{rel}: fn {name} (line {first}) is {lines} lines, over {FN_MAX}: split it into named steps"))
    problems.extend((f, m) for f, m in sizes if f not in SIZE_LEFT)
    # Cycles between files (Tarjan).
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(fs):
        if v not in index:
            strong(v)
    for c in sccs:
        problems.append((None, "cycle: " + " <-> ".join(c)))

    # The graph between layers.
    layer_edges = defaultdict(set)
    for a, bs in edges.items():
        for b in bs:
            if layer_of(a) != layer_of(b) and layer_of(b) != "main":
                layer_edges[layer_of(a)].add(layer_of(b))
    print("layers, top to bottom, and what each imports:")
    for name in reversed(LAYERS):
        n = sum(1 for r in fs if layer_of(r) == name)
        deps = sorted(layer_edges.get(name, ()), key=lambda x: -RANK[x])
        print(f"  {name:<9} ({n:>2} files) -> {', '.join(deps) if deps else '-'}")
    if show_files:
        print("files:")
        for a in sorted(edges):
            print(f"  {a} -> {', '.join(sorted(edges[a]))}")
    print(f"{len(fs)} files, {sum(len(b) for b in edges.values())} imports between files")
    print("rules:")
    print("  an import points down the layers (or within one); no cycle between files")
    print(f"  {', '.join(p + '/' for p in PURE)} name none of: {', '.join(b for b, _ in PURE_BANNED)}")
    print(f"  clap ({', '.join(w for _, w in CLAP_BANNED)}) in no layer below cli/")
    print(f"  {', '.join(HOT)} name none of: {', '.join(b + '::' for b in HOT_BANNED)}")
    print(f"  only {HOST_FILE} names \"/sys\" or \"/proc\" (a process's own /proc/self/ aside)")
    print(f"  no argument synthesis: only main.rs and {', '.join(sorted(ARGV_PARSERS))} parse an argument vector; only main.rs{''.join(' and ' + f for f in sorted(ARGV_BUILDERS))} writes one")
    for f, why in sorted({**ARGV_PARSERS, **ARGV_BUILDERS}.items()):
        print(f"    {f}: {why}")
    print(f"  only {' and '.join(PRINT_FREE)}{''.join(' and ' + f for f in sorted(PRINT_LEFT))} print (println!, eprintln!, print!, eprint!)")
    for f, why in sorted(PRINT_LEFT.items()):
        print(f"    {f}: {why}")
    print(f"  every commands/ file under {COMMAND_FILE_MAX} lines; no function outside tests over {FN_MAX} lines")
    print(f"  document/ judges nothing: none of: {'; '.join(w for _, w in JUDGEMENT_BANNED)}")
    print("  contract types (a Serialize derive) only in document/; outside it, these, and why:")
    for f, names in sorted(SERDE_LEFT.items()):
        for name, why in sorted(names.items()):
            print(f"    {f} {name}: {why}")
    problems.extend(print_left("judgement left in document/ (not yet moved to analysis/):", judgement,
                               JUDGEMENT_LEFT, "JUDGEMENT_LEFT lists {}, which judges nothing now: drop it"))
    problems.extend(print_left("sizes still over (not yet split):", sizes,
                               SIZE_LEFT, "SIZE_LEFT lists {}, which is within the sizes now: drop it"))
    pending = [(f, m) for f, m in problems if f in PENDING]
    failed = [m for f, m in problems if f not in PENDING]
    if pending:
        print("pending (fixed on another branch):")
        for f in sorted({f for f, _ in pending}):
            print(f"  {f}: {PENDING[f]}")
            for _, m in pending:
                if _ == f:
                    print(f"    {m}")
    stale = sorted(set(PENDING) - {f for f, _ in pending})
    for f in stale:
        print(f"note: PENDING lists {f}, which no longer offends: drop it")
    if failed:
        for m in failed:
            print("FAIL " + m)
        print(f"layer check: {len(failed)} problem(s)")
        return 1
    print("layer check: no upward import, no cycle, no rule broken" + (f" ({len(pending)} pending)" if pending else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())

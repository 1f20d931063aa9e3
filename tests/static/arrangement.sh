#!/usr/bin/env bash
# Counts that say how the C tree is arranged, comparable between two trees
# (say before and after a reorganization). Figures, not assertions.
#
#   c_files_over_500_lines  product .c and .h files (everything outside tests/)
#                           longer than 500 lines
#   jansson_calls           calls of jansson's json_* functions and macros
#                           (names declared in jansson.h) in product code,
#                           comments and strings left out
#   literal_key_lookups     json_object_get(..., "literal"): lookups whose key
#                           is a string literal, out of all json_object_get calls
#   public_headers          headers a consumer can include: every .h under a
#                           folder some CMakeLists.txt (outside tests/) gives
#                           to target_include_directories as PUBLIC or
#                           INTERFACE (inside a function such as cv_library,
#                           once for each folder that calls the function)
#   call_loops              from `nm` of the product objects in BUILD_DIR: in
#   files_in_call_loops     each folder, the graph of its files (a -> b when a
#                           uses a symbol b defines); the strongly connected
#                           components of more than one file, and their files
#
# usage: tests/static/arrangement.sh [--root DIR] [--verbose] BUILD_DIR
#   --root DIR   the tree to count (default: this script's tree); BUILD_DIR
#                must be a build of that tree (objects are found by path)
#   --verbose    also lists the long files, the public headers and the loops
set -uo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
VERBOSE=0
BUILD=
while [ $# -gt 0 ]; do
    case $1 in
    --root) ROOT=$(cd "$2" && pwd) || exit 2; shift 2 ;;
    --verbose) VERBOSE=1; shift ;;
    -h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) BUILD=$1; shift ;;
    esac
done
[ -n "$BUILD" ] || { echo "usage: $0 [--root DIR] [--verbose] BUILD_DIR" >&2; exit 2; }
BUILD=$(cd "$BUILD" && pwd) || { echo "arrangement: no build directory $BUILD" >&2; exit 2; }
command -v python3 >/dev/null || { echo "arrangement: python3 is needed" >&2; exit 2; }
command -v nm >/dev/null || { echo "arrangement: nm is needed" >&2; exit 2; }

JANSSON_H=
for d in "$(pkg-config --variable=includedir jansson 2>/dev/null)" /usr/include /usr/local/include; do
    [ -n "$d" ] && [ -f "$d/jansson.h" ] && { JANSSON_H=$d/jansson.h; break; }
done
[ -n "$JANSSON_H" ] || { echo "arrangement: jansson.h not found" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Product sources: the tree's C files outside tests/ (tracked or not, not ignored).
if git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    git -C "$ROOT" ls-files -co --exclude-standard -- '*.c' '*.h' | grep -v '^tests/' >"$work/sources"
else
    (cd "$ROOT" && find . \( -path ./tests -o -path './build*' -o -path './.*' \) -prune -o \
        -type f \( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||') >"$work/sources"
fi
sort -o "$work/sources" "$work/sources"
[ -s "$work/sources" ] || { echo "arrangement: no C sources under $ROOT" >&2; exit 2; }

# The symbols of every object in BUILD_DIR: "object<TAB>D|U<TAB>symbol" (the
# objects of product sources are picked out below).
find "$BUILD" -path '*/CMakeFiles/*.dir/*' -name '*.o' -type f | sort >"$work/objects"
[ -s "$work/objects" ] || { echo "arrangement: no objects in $BUILD" >&2; exit 2; }
while IFS= read -r obj; do
    nm -P "$obj" 2>/dev/null | awk -v obj="$obj" '
        $2 == "U" { print obj "\tU\t" $1; next }
        $2 ~ /^[A-TV-Z]$/ { print obj "\tD\t" $1 }'
done <"$work/objects" >"$work/symbols"

echo "arrangement of $ROOT (objects: $BUILD)"

long=0
while IFS= read -r f; do
    [ -f "$ROOT/$f" ] || continue # tracked, but deleted from the work tree
    n=$(wc -l <"$ROOT/$f")
    if [ "$n" -gt 500 ]; then
        long=$((long + 1))
        [ $VERBOSE = 1 ] && printf '    %5d %s\n' "$n" "$f" >>"$work/long"
    fi
done <"$work/sources"
echo "c_files_over_500_lines: $long (of $(wc -l <"$work/sources") .c and .h files)"
[ -f "$work/long" ] && sort -rn "$work/long"

python3 - "$ROOT" "$BUILD" "$JANSSON_H" "$work/sources" "$work/symbols" "$VERBOSE" <<'EOF'
import os, re, sys
from collections import defaultdict

root, build, jansson_h, sources_file, symbols_file, verbose = sys.argv[1:]
verbose = verbose == "1"
sources = [l.rstrip("\n") for l in open(sources_file) if l.strip()]

def strip_comments(text, keep_strings=True):
    """Comments become spaces; with keep_strings False, strings' contents too."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(" " * (j - i)); i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i)); i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(text[i:j] if keep_strings else c + " " * (j - i - 2) + c); i = j
        else:
            out.append(c); i += 1
    return "".join(out)

# jansson's API: every json_* name jansson.h declares as a function or macro.
api = set(re.findall(r"\b(json_[A-Za-z0-9_]+)\s*\(", strip_comments(open(jansson_h).read())))

def call_args(text, start):
    """The top-level arguments of the call whose '(' is at start."""
    depth, i, args, cur = 0, start, [], []
    while i < len(text):
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < len(text) and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            cur.append(text[i:j + 1]); i = j + 1; continue
        if c == "(":
            depth += 1
            if depth == 1: i += 1; continue
        elif c == ")":
            depth -= 1
            if depth == 0: args.append("".join(cur).strip()); return args
        elif c == "," and depth == 1:
            args.append("".join(cur).strip()); cur = []; i += 1; continue
        cur.append(c); i += 1
    return args

calls = lookups = literal = 0
for f in sources:
    code = strip_comments(open(os.path.join(root, f), errors="replace").read())
    bare = strip_comments(code, keep_strings=False)
    calls += sum(1 for m in re.finditer(r"\b(json_[A-Za-z0-9_]+)\s*\(", bare) if m.group(1) in api)
    for m in re.finditer(r"\bjson_object_get\s*\(", bare):
        lookups += 1
        args = call_args(code, m.end() - 1)
        if len(args) >= 2 and args[1].startswith('"'):
            literal += 1
print(f"jansson_calls: {calls}")
print(f"literal_key_lookups: {literal} (of {lookups} json_object_get calls)")

# Public include folders, from the CMakeLists.txt files outside tests/.
lists = []
for d, subdirs, files in os.walk(root):
    rel = os.path.relpath(d, root)
    subdirs[:] = [s for s in subdirs if not (rel == "." and (s == "tests" or s.startswith(("build", "."))))]
    if "CMakeLists.txt" in files:
        lists.append(os.path.join(d, "CMakeLists.txt"))
texts = {p: re.sub(r"#[^\n]*", "", open(p).read()) for p in lists}

def calls_of(text, name):
    for m in re.finditer(r"(?<![\w$])" + re.escape(name) + r"\s*\(", text):
        end = text.find(")", m.end())
        yield m.start(), text[m.end():end if end >= 0 else len(text)]

functions = {}  # name -> (file, start, end)
for p, t in texts.items():
    for m in re.finditer(r"(?i)\bfunction\s*\(\s*(\w+)", t):
        end = re.compile(r"(?i)\bendfunction\s*\(").search(t, m.end())
        functions[m.group(1)] = (p, m.start(), end.start() if end else len(t))

public_dirs = set()
for p, t in texts.items():
    for at, args in calls_of(t, "target_include_directories"):
        words, mode, dirs = args.split()[1:], None, []
        for w in words:
            if w in ("PUBLIC", "INTERFACE", "PRIVATE"): mode = w; continue
            if w in ("SYSTEM", "BEFORE", "AFTER"): continue
            if mode in ("PUBLIC", "INTERFACE"): dirs.append(w)
        contexts = [os.path.dirname(p)]
        for fname, (fp, fs, fe) in functions.items():
            if fp == p and fs <= at < fe:  # in a function: once per folder calling it
                contexts = [os.path.dirname(q) for q, qt in texts.items()
                            for s, _ in calls_of(qt, fname) if not (q == fp and fs <= s < fe)]
        for ctx in contexts:
            for w in dirs:
                w = w.replace("${CMAKE_CURRENT_SOURCE_DIR}", ctx)
                w = w.replace("${CMAKE_SOURCE_DIR}", root).replace("${PROJECT_SOURCE_DIR}", root)
                if "$" in w: continue  # a build folder or a generator expression
                w = os.path.normpath(os.path.join(ctx, w))
                if os.path.commonpath([w, root]) == root: public_dirs.add(w)
headers = sorted({os.path.relpath(os.path.join(d, h), root)
                  for pd in public_dirs for d, _, fs in os.walk(pd) for h in fs if h.endswith(".h")})
print(f"public_headers: {len(headers)} (in {len(public_dirs)} public include folders)")
if verbose:  # each header under the deepest public folder holding it
    count = defaultdict(int)
    for h in headers:
        hd = os.path.dirname(os.path.join(root, h))
        count[max((pd for pd in public_dirs if os.path.commonpath([pd, hd]) == pd), key=len)] += 1
    for pd in sorted(public_dirs):
        print(f"    {os.path.relpath(pd, root)}/: {count[pd]}")

# Call loops: strongly connected components of each folder's file graph. An
# object BUILD/A/CMakeFiles/T.dir/REL.o is that of ROOT/A/REL (CMake writes a
# parent folder as __); generated sources and tests' are left out, and a
# source compiled into several targets counts once.
product, source_of = set(sources), {}
def source(obj):
    if obj not in source_of:
        rel = os.path.relpath(obj, build)
        a, _, rest = rel.partition("CMakeFiles/")
        rest = rest.split("/", 1)[1][:-2] if "/" in rest else ""
        rest = "/".join(".." if part == "__" else part for part in rest.split("/"))
        src = os.path.normpath(os.path.join(a, rest))
        source_of[obj] = src if src in product else None
    return source_of[obj]
first = {}  # source -> the object read for it
defs, uses = defaultdict(set), defaultdict(set)
for line in open(symbols_file):
    obj, kind, sym = line.rstrip("\n").split("\t")
    src = source(obj)
    if src is None or first.setdefault(src, obj) != obj: continue
    (defs if kind == "D" else uses)[src].add(sym)
objects = len(first)
if not objects:
    sys.exit(f"arrangement: no objects of {root}'s sources in {build}")
definer = defaultdict(set)  # (folder, symbol) -> files
for src, syms in defs.items():
    for s in syms: definer[(os.path.dirname(src), s)].add(src)
files = set(defs) | set(uses)
graph = {f: set() for f in files}
for f in files:
    for s in uses[f]:
        graph[f] |= definer.get((os.path.dirname(f), s), set()) - {f}

index, low, on, stack, sccs, counter = {}, {}, set(), [], [], [0]
for start in sorted(graph):  # Tarjan's algorithm, without recursion
    if start in index: continue
    work = [(start, iter(sorted(graph[start])))]
    index[start] = low[start] = counter[0]; counter[0] += 1; stack.append(start); on.add(start)
    while work:
        v, it = work[-1]
        w = next(it, None)
        if w is not None:
            if w not in index:
                index[w] = low[w] = counter[0]; counter[0] += 1; stack.append(w); on.add(w)
                work.append((w, iter(sorted(graph[w]))))
            elif w in on:
                low[v] = min(low[v], index[w])
            continue
        work.pop()
        if work: low[work[-1][0]] = min(low[work[-1][0]], low[v])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop(); on.discard(w); comp.append(w)
                if w == v: break
            if len(comp) > 1: sccs.append(sorted(comp))
print(f"call_loops: {len(sccs)} (in {len({os.path.dirname(c[0]) for c in sccs})} folders; "
      f"{objects} objects of {len({os.path.dirname(f) for f in files})} folders read)")
print(f"files_in_call_loops: {sum(len(c) for c in sccs)}")
if verbose:
    for c in sorted(sccs, key=lambda c: (os.path.dirname(c[0]), -len(c))):
        print(f"    {os.path.dirname(c[0])}/: {len(c)} files: " + " ".join(os.path.basename(f) for f in c))
EOF

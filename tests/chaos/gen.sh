#!/usr/bin/env bash
# gen.sh N OUT — the chaos suite's stack: tests/bench/gen_stack.sh mixed N
# (chains of 12 hanging off fans of 9, N rounded down to a multiple of 110)
# with a parameter `ver` (default "1") that every 10th resource follows, so
# that `update -P ver=2` changes 10% of the stack: of those, every other one
# becomes an OS::Heat::Value whose value follows it (updated in place;
# OS::Heat::None, as in Heat, never needs an update), the others become
# OS::Heat::TestResource with update_replace_value (replaced: a new version
# is created, then the old one deleted). Writes:
#   OUT.yaml          the template
#   OUT.deps.json     {"resource": ["parent", ...], ...} for every resource
#   OUT.changes.json  {"inplace": [...], "replace": [...]} what ver=2 changes
set -euo pipefail
n=${1:?usage: gen.sh N OUT}
out=${2:?usage: gen.sh N OUT}
here=$(cd "$(dirname "$0")" && pwd)
"$here/../bench/gen_stack.sh" mixed "$n" | awk -v out="$out" '
function flush_deps() { if (cur != "") printf "%s\"%s\": [%s]", (nres++ ? ",\n" : "{\n"), cur, deps > (out ".deps.json") }
/^heat_template_version/ { print; next }
/^description/ { print; print "parameters:\n  ver: {type: string, default: \"1\"}"; next }
/^resources:/ { print; next }
/^  [A-Za-z0-9_]+:$/ {
    flush_deps()
    cur = substr($1, 1, length($1) - 1); deps = ""; idx++
    print; next
}
/^    type: / {
    if (idx % 10 == 1) {
        if (int(idx / 10) % 2 == 0) {
            print "    type: OS::Heat::Value"
            print "    properties: {value: {get_param: ver}}"
            inplace = inplace (inplace == "" ? "" : ", ") "\"" cur "\""
        } else {
            print "    type: OS::Heat::TestResource"
            print "    properties: {value: x, update_replace_value: {get_param: ver}}"
            replace = replace (replace == "" ? "" : ", ") "\"" cur "\""
        }
        next
    }
    print; next
}
/^    depends_on: / {
    print
    d = $0; sub(/^    depends_on: /, "", d); gsub(/[][ ]/, "", d)
    m = split(d, parts, ",")
    for (i = 1; i <= m; i++) deps = deps (deps == "" ? "" : ", ") "\"" parts[i] "\""
    next
}
{ print }
END {
    flush_deps(); print "\n}" > (out ".deps.json")
    printf "{\"inplace\": [%s],\n \"replace\": [%s]}\n", inplace, replace > (out ".changes.json")
}' >"$out.yaml"

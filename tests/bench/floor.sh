#!/usr/bin/env bash
# The floor: the least Redis can spend on one resource of a flat stack that
# settles at once while the keyspace stays as docs/keyspace.md documents it.
# It runs only the commands no batching can share, per resource:
#
#   reads   SISMEMBER done, HGET graph entry, HGET definition, HGETALL record
#   lease   SET NX PX, GET, DEL
#   writes  HSET record (its 15 fields), XADD (one entry: the COMPLETE
#           event with its IN_PROGRESS reason in `begun`), HINCRBY ledger,
#           SADD done
#
# (12 commands; the stack's own reads and counts are left out, as if one
# call served a whole batch), with values of the sizes a real run writes, on
# keys of a scratch prefix of the Redis at PORT, which it deletes after:
#
#   1. in Lua, 64 resources to a script call, 4 calls in flight;
#   2. as plain commands, pipelined (redis-cli --pipe): no script at all.
#
# Prints Redis CPU (INFO used_cpu_sys + used_cpu_user, AOF writes included)
# and memory per resource. Figures, not assertions.
#
#   tests/bench/floor.sh PORT [RESOURCES]     (default 64,000)
set -euo pipefail
PORT=${1:?usage: floor.sh PORT [RESOURCES]}
N=${2:-64000}
BATCH=64
P=(-p "$PORT")
PREFIX="{cvfloor}"

cpu() { redis-cli "${P[@]}" info cpu | tr -d '\r' | awk -F: '$1 ~ /^used_cpu_(sys|user)$/ { s += $2 } END { print s }'; }
mem() { redis-cli "${P[@]}" info memory | tr -d '\r' | awk -F: '$1 == "used_memory" { print $2 }'; }
clean() { redis-cli "${P[@]}" --scan --pattern "$PREFIX*" | xargs -r -n 500 redis-cli "${P[@]}" unlink >/dev/null; }
trap clean EXIT

# One resource's commands, as Lua (r: its name, u: its uuid, t: the time).
read -r -d '' ONE <<'EOF' || true
  local res, lease = P .. ':res:' .. r, P .. ':lease:' .. r
  redis.call('SISMEMBER', P .. ':done', 'u/' .. r)
  redis.call('HGET', P .. ':graph', 'u/' .. r)
  redis.call('HGET', P .. ':rdef', r)
  redis.call('SET', lease, 'engine-1@7f3a9c:1234', 'PX', 5000, 'NX')
  redis.call('HGETALL', res)
  redis.call('HSET', res, 'status', 'CREATE_COMPLETE', 'version', 1, 'updated', t,
    'worker', 'engine-1', 'action', 'CREATE', 'reason', 'state changed', 'physical_id', u,
    'uuid', u, 'type', 'OS::Heat::None', 'props', '{}', 'attrs', '{}', 'data', '{}',
    'traversal', '1', 'started', t .. '123', 'policy', 'Delete')
  redis.call('XADD', P .. ':events', 'MAXLEN', '~', 200000, '*', 'time', t, 'resource', r,
    'physical_id', u, 'action', 'CREATE', 'status', 'COMPLETE', 'reason', 'state changed',
    'traversal', '1', 'worker', 'engine-1', 'begun', 'state changed')
  redis.call('HINCRBY', P .. ':ledger', 'create:' .. u, 1)
  redis.call('SADD', P .. ':done', 'u/' .. r)
  if redis.call('GET', lease) == 'engine-1@7f3a9c:1234' then redis.call('DEL', lease) end
EOF
SHA=$(redis-cli "${P[@]}" script load "local P, base, n = ARGV[1], ARGV[2], tonumber(ARGV[3])
local t = redis.call('TIME')[1] .. '.123'
for i = 1, n do
  local r = 'r' .. base .. '-' .. i
  local u = string.format('%08x-0000-5000-8000-%012x', tonumber(base) % 4294967296, i)
$ONE
end
return n")

c0=$(cpu) m0=$(mem)
# redis-benchmark takes a password on its command line only: on a secured
# deployment run.sh gives it a throwaway user (CV_BENCH_USER, CV_BENCH_PASS).
BENCH_AUTH=()
[ -z "${CV_BENCH_USER:-}" ] || BENCH_AUTH=(--user "$CV_BENCH_USER" -a "$CV_BENCH_PASS")
redis-benchmark "${P[@]}" "${BENCH_AUTH[@]}" -q -c 4 -n $((N / BATCH)) -r 1000000000 \
    evalsha "$SHA" 0 "$PREFIX" __rand_int__ "$BATCH" >/dev/null
c1=$(cpu) m1=$(mem)
lua=$(awk -v a="$c0" -v b="$c1" -v n="$N" 'BEGIN { printf "%.1f", (b - a) * 1e6 / n }')
lua_mem=$(awk -v a="$m0" -v b="$m1" -v n="$N" 'BEGIN { printf "%.0f", (b - a) / n }')
clean

# The same commands for N resources as a RESP stream for redis-cli --pipe.
resp() {
    awk -v n="$N" -v P="$PREFIX" 'function cmd(a, k,   i, s) {
            s = "*" k "\r\n"
            for (i = 1; i <= k; i++) s = s "$" length(a[i]) "\r\n" a[i] "\r\n"
            printf "%s", s
        }
        BEGIN {
        t = "1795572755.123"
        for (i = 1; i <= n; i++) {
            r = "r" i; u = sprintf("%08x-0000-5000-8000-%012x", 7, i)
            res = P ":res:" r; lease = P ":lease:" r
            split("SISMEMBER|" P ":done|u/" r, a, "|"); cmd(a, 3)
            split("HGET|" P ":graph|u/" r, a, "|"); cmd(a, 3)
            split("HGET|" P ":rdef|" r, a, "|"); cmd(a, 3)
            split("SET|" lease "|engine-1@7f3a9c:1234|PX|5000|NX", a, "|"); cmd(a, 6)
            split("HGETALL|" res, a, "|"); cmd(a, 2)
            split("HSET|" res "|status|CREATE_COMPLETE|version|1|updated|" t "|worker|engine-1|action|CREATE|reason|state changed|physical_id|" u "|uuid|" u "|type|OS::Heat::None|props|{}|attrs|{}|data|{}|traversal|1|started|" t "123|policy|Delete", a, "|"); cmd(a, 32)
            split("XADD|" P ":events|MAXLEN|~|200000|*|time|" t "|resource|" r "|physical_id|" u "|action|CREATE|status|COMPLETE|reason|state changed|traversal|1|worker|engine-1|begun|state changed", a, "|"); cmd(a, 24)
            split("HINCRBY|" P ":ledger|create:" u "|1", a, "|"); cmd(a, 4)
            split("SADD|" P ":done|u/" r, a, "|"); cmd(a, 3)
            split("GET|" lease, a, "|"); cmd(a, 2)
            split("DEL|" lease, a, "|"); cmd(a, 2)
        } }'
}
stream=$(mktemp)
trap 'rm -f "$stream"; clean' EXIT
resp >"$stream"
c0=$(cpu) m0=$(mem)
redis-cli "${P[@]}" --pipe <"$stream" >/dev/null
c1=$(cpu) m1=$(mem)
plain=$(awk -v a="$c0" -v b="$c1" -v n="$N" 'BEGIN { printf "%.1f", (b - a) * 1e6 / n }')
plain_mem=$(awk -v a="$m0" -v b="$m1" -v n="$N" 'BEGIN { printf "%.0f", (b - a) / n }')

echo "floor    Redis per resource, the 12 commands no batch can share ($N resources):"
echo "         $lua µs in Lua ($BATCH resources to a script call), $plain µs as plain pipelined commands;"
echo "         memory $lua_mem B / $plain_mem B (record, event entry, ledger entry, done member)"

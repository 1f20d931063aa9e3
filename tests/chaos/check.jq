# The invariants of one stack at the end of a chaos phase (tests/chaos/check.sh).
# Input: the dump of tests/chaos/dump.lua (events of the phase's traversals only).
# --arg phase create|update|delete, --arg expect the terminal status,
# --slurpfile deps [{resource: [parent, ...]}], --slurpfile changes
# [{"inplace": [...], "replace": [...]}], --slurpfile before [dump before the
# update, or {}], --arg ledger_mode required|optional, --arg lost_after MS
# ('' = none): the stack's Redis master was killed at MS and its replica
# took over (tests/chaos/redis_failover.sh): writes the old master had
# acknowledged but not yet replicated are lost, and the workers do them
# again (docs/redis-cluster.md). A node whose completion was lost is redone
# after its successors, whose jobs were already published, ran: a pair of
# events out of dependency order is then a note, not a violation, when both
# events come after MS. Replication keeps order (what survives is a prefix
# of what the master wrote), so a successor's start from before MS implies
# its predecessor's completion survived: such a pair stays a violation.
# Output: one line per finding, "VIOLATION: ..." or "note: ...".

def v(msg): "VIOLATION: " + msg;
def n(msg): "note: " + msg;
def num: if . == null or . == "" then 0 else tonumber end;
def obj: if type == "object" then . else {} end;
def list: if type == "array" then . else [] end;
def some(f): (map(f) | length > 0);
def olds: if . == "" or . == null then [] else (try fromjson catch [] | list) end;
def since_ms: split("-")[0] | tonumber;
def sample: if length > 5 then (.[0:5] | join(", ")) + ", ... (\(length) in all)" else join(", ") end;

. as $d
| ($deps[0]) as $deps
| ($changes[0] // {inplace: [], replace: []}) as $changes
| ($before[0] // {} | .res // {} | obj) as $before
| ($deps | keys) as $names
| ($d.res | obj) as $res
| ($d.index | obj) as $index
| ($d.counts | obj) as $counts
| ($d.ledger | obj) as $ledger
| ($d.events | list) as $ev
| ($d.stack.traversal // "?") as $trav
| (if $lost_after == "" then null else ($lost_after | tonumber) end) as $lost
# First position in the events of (resource, action, status); action "*" = any.
| (reduce range(0; $ev | length) as $i ({};
      ($ev[$i]) as $e
      | ($e[1] + "|" + $e[2] + "|" + $e[3]) as $k
      | ($e[1] + "|*|" + $e[3]) as $ka
      | (if has($k) then . else .[$k] = $i end)
      | (if has($ka) or $e[2] == "DELETE" then . else .[$ka] = $i end))) as $first
| (reduce $ev[] as $e ({}; .[$e[1] + "|" + $e[2] + "|" + $e[3]] += 1)) as $nev
| def at(r; a; s): $first[r + "|" + a + "|" + s];
  # Positions i, j of events both after the loss (see the header).
  def lost(i; j): $lost != null and ($ev[i][0] | since_ms) >= $lost and ($ev[j][0] | since_ms) >= $lost;
  def order(what; pairs):
    (pairs | map(select(.[0] | not) | .[1]) | if length > 0 then v("\(length) \(what) out of dependency order: \(sample)") else empty end),
    (pairs | map(select(.[0]) | .[1]) | if length > 0 then n("\(length) \(what) out of dependency order after the Redis failover, redone as writes lost with the old master: \(sample)") else empty end);
  [
    # ---- the stack
    (if $d.stack.status != $expect then
        v("stack status \($d.stack.status // "(no stack record)"), expected \($expect): \($d.stack.reason // "")")
     else empty end),
    (if ($d.stack.done | num) != ($d.stack.total | num) then
        v("stack progress \($d.stack.done)/\($d.stack.total) at \($d.stack.status)") else empty end),
    (if $phase == "delete" then
        (if $d.name_mapped != "" then v("the name still maps to the stack after DELETE_COMPLETE") else empty end)
     else
        (if $d.name_mapped != $d.stack.id then v("the name maps to \($d.name_mapped), not \($d.stack.id)") else empty end)
     end),

    # ---- records: none missing, none extra, each settled
    (if $phase == "delete" then
        ([$res | keys[]] | if length > 0 then
            ([$res[] | select(.status == "")] | length) as $bare
            | v("\(length) resource records remain after delete: \(sample)"
                + (if $bare > 0 then " (\($bare) of them without a status: stray fields such as old=\([$res[] | select(.status == "") | .old][0])" + ")" else "" end))
         else empty end),
        ([$index | keys[]] | if length > 0 then v("\(length) index entries remain after delete: \(sample)") else empty end),
        ([$counts | to_entries[] | select((.value | num) != 0) | "\(.key)=\(.value)"]
           | if length > 0 then v("status counts not empty after delete: \(join(", "))") else empty end)
     else
        (($names - ($res | keys)) | if length > 0 then v("\(length) resources have no record: \(sample)") else empty end),
        ((($res | keys) - $names) | if length > 0 then v("\(length) records of resources not in the template: \(sample)") else empty end),
        (($names - ($index | keys)) | if length > 0 then v("\(length) resources missing from the index: \(sample)") else empty end),
        ((($index | keys) - $names) | if length > 0 then v("\(length) index entries not in the template: \(sample)") else empty end),
        ([$res | to_entries[]
          | select(.value.status as $s | if $phase == "create" then $s != "CREATE_COMPLETE"
                   else ($s != "CREATE_COMPLETE" and $s != "UPDATE_COMPLETE") end)
          | "\(.key)=\(.value.status)"]
           | if length > 0 then v("\(length) resources not complete: \(sample)") else empty end),
        ([$res | to_entries[] | select((.value.old | olds | length) > 0) | .key]
           | if length > 0 then v("\(length) resources still have replaced versions: \(sample)") else empty end),
        # counts kept by the scripts agree with the records
        (([$res[] | .status] | group_by(.) | map({(.[0]): length}) | add // {}) as $real
         | [($real | keys[]), ($counts | keys[])] | unique
         | map(select(($real[.] // 0) != ($counts[.] | num)) | "\(.): counts \($counts[.] // 0), records \($real[.] // 0)")
         | if length > 0 then v("status counts drift from the records: \(join("; "))") else empty end)
     end),

    # ---- the physical-create ledger: every version created exactly once
    (if ($d.ledger_exists | num) == 0 then
        (if $ledger_mode == "required" then v("no ledger \("cv:{" + ($d.stack.id // "?") + "}:ledger") (physical creates cannot be counted)")
         else n("no ledger in this tree: exactly-once creation not verified") end)
     else
        ([$res | to_entries[] | .value.uuid] | map(select(. != ""))) as $cur
        | ([$res[] | .old | olds[] | (.uuid? // empty)]) as $old
        | ([$ledger | to_entries[] | select(.key | startswith("create:")) | {key: .key[7:], value: (.value | num)}] | from_entries) as $cr
        | ([$ledger | to_entries[] | select(.key | startswith("delete:")) | {key: .key[7:], value: (.value | num)}] | from_entries) as $del
        | ([$cr | to_entries[] | select(.value > 1) | "\(.key) x\(.value)"]
             | if length > 0 then v("\(length) resource versions created more than once: \(sample)") else empty end),
          ([$del | to_entries[] | select(.value > 1) | "\(.key) x\(.value)"]
             | if length > 0 then v("\(length) resource versions deleted more than once: \(sample)") else empty end),
          ([$cur[] | select(($cr[.] // 0) != 1) | "\(.) x\($cr[.] // 0)"]
             | if length > 0 then v("\(length) current resource versions not created exactly once: \(sample)") else empty end),
          ([$old[] | select(($cr[.] // 0) != 1) | "\(.) x\($cr[.] // 0)"]
             | if length > 0 then v("\(length) replaced versions not created exactly once: \(sample)") else empty end),
          ([$cur[] | select(($del[.] // 0) > 0)]
             | if length > 0 then v("\(length) current resource versions were deleted: \(sample)") else empty end),
          ([$del | keys[] | select(($cr[.] // 0) == 0)]
             | if length > 0 then v("\(length) versions deleted but never created: \(sample)") else empty end),
          (($cur + $old) as $live
           | [$cr | keys[] | select(. as $u | ($live | index([$u])) == null and ($del[$u] // 0) == 0)]
           | if length > 0 then v("\(length) created versions neither current nor deleted (leaked): \(sample)") else empty end),
          (if $phase == "delete" then
             ([$cr | to_entries[] | .value] | add // 0) as $c | ([$del | to_entries[] | .value] | add // 0) as $x
             | if $c != $x then v("ledger: \($c) creates but \($x) deletes after delete") else empty end
           else empty end)
     end),

    # ---- an update did what it had to
    (if $phase == "update" then
        ($changes.inplace[] as $r | $res[$r] // {} | . as $now | ($before[$r] // {}) as $was
         | if ($now.uuid // "") != ($was.uuid // "") then v("\($r): replaced, expected an update in place")
           elif (($now.props // "{}") | fromjson | .value) != "2" then v("\($r): property value is not the new value")
           else empty end),
        ($changes.replace[] as $r | $res[$r] // {} | . as $now | ($before[$r] // {}) as $was
         | if ($now.uuid // "") == ($was.uuid // "") then v("\($r): not replaced (same version \($now.uuid))")
           elif (($now.props // "{}") | fromjson | .update_replace_value) != "2" then v("\($r): update_replace_value is not the new value")
           else empty end),
        ([$names[] | select(. as $r | ($changes.replace | index([$r])) == null)
          | select(($res[.].uuid // "") != ($before[.].uuid // "x"))]
           | if length > 0 then v("\(length) unchanged resources got a new version: \(sample)") else empty end)
     else empty end),

    # ---- events of this traversal agree with the dependency order
    (if $phase == "create" then
        ([$names[] | select(at(.; "CREATE"; "COMPLETE") == null)]
           | if length > 0 then v("\(length) resources have no CREATE COMPLETE event: \(sample)") else empty end),
        order("creates"; [$deps | to_entries[] | .key as $c | .value[] as $p
          | at($c; "CREATE"; "IN_PROGRESS") as $ci | at($p; "CREATE"; "COMPLETE") as $pc
          | select($ci != null and $pc != null and $ci < $pc)
          | [lost($ci; $pc), "\($c) started (event \($ci)) before \($p) completed (event \($pc))"]]),
        ([$names[] | select(($nev[. + "|CREATE|COMPLETE"] // 0) > 1)]
           | if length > 0 then n("\(length) resources have more than one CREATE COMPLETE event: \(sample)") else empty end)
     elif $phase == "update" then
        ([$changes.inplace[] | select(at(.; "UPDATE"; "COMPLETE") == null)]
           | if length > 0 then v("\(length) resources updated in place have no UPDATE COMPLETE event: \(sample)") else empty end),
        ([$changes.replace[] | select(at(.; "CREATE"; "COMPLETE") == null or at(.; "DELETE"; "COMPLETE") == null)]
           | if length > 0 then v("\(length) replaced resources lack a CREATE or DELETE COMPLETE event: \(sample)") else empty end),
        order("updates"; [$deps | to_entries[] | .key as $c | .value[] as $p
          | at($c; "*"; "IN_PROGRESS") as $ci | at($p; "*"; "COMPLETE") as $pc
          | select($ci != null and $pc != null and $ci < $pc)
          | [lost($ci; $pc), "\($c) started (event \($ci)) before \($p) completed (event \($pc))"]]),
        order("replaced versions (deleted before their replacement was complete)";
          [$changes.replace[] | at(.; "DELETE"; "IN_PROGRESS") as $di | at(.; "CREATE"; "COMPLETE") as $cc
          | select($di != null and $cc != null and $di < $cc) | [lost($di; $cc), "\(.)"]])
     else
        ([$names[] | select(at(.; "DELETE"; "COMPLETE") == null)]
           | if length > 0 then v("\(length) resources have no DELETE COMPLETE event: \(sample)") else empty end),
        order("deletes"; [$deps | to_entries[] | .key as $c | .value[] as $p
          | at($p; "DELETE"; "IN_PROGRESS") as $pi | at($c; "DELETE"; "COMPLETE") as $cc
          | select($pi != null and $cc != null and $pi < $cc)
          | [lost($pi; $cc), "\($p) delete started (event \($pi)) before its dependent \($c) was deleted (event \($cc))"]]),
        ([$names[] | select(($nev[. + "|DELETE|COMPLETE"] // 0) > 1)]
           | if length > 0 then n("\(length) resources have more than one DELETE COMPLETE event: \(sample)") else empty end)
     end),

    # ---- what is left behind (notes)
    ([$d.leases | obj | keys[]] | if length > 0 then n("\(length) leases still held: \(sample)") else empty end),
    ([$d.other | obj | keys[] | select(test("^(rdef|graph|sp|done):"))
      | select(($d.stack.status // "" | endswith("_IN_PROGRESS") | not)
               or (capture("^[a-z]+:(?<t>[0-9]+)").t != $trav))]
       | if length > 0 then n("\(length) keys of finished traversals remain: \(sample)") else empty end)
  ]
| .[]

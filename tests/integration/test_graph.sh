# Integration tests of `convergectl graph` (sourced by run.sh): the
# dependency graph of a stack on the local deployment, as dot and as SVG.
# shellcheck shell=bash

# graph_nodes DOT: the node IDs the dot text declares, sorted, one a line.
graph_nodes() { sed -n 's/^  "\([^"]*\)" \[label=.*/\1/p' <<<"$1" | sort; }

# graph_edges DOT: its edges as "FROM TO", sorted, one a line.
graph_edges() { sed -n 's/^  "\([^"]*\)" -> "\([^"]*\)";$/\1 \2/p' <<<"$1" | sort; }

# graph_stack NAME TEMPLATE: submits the stack and waits for it to complete.
graph_stack() { ctl submit "$1" "$2" --wait >/dev/null; }

# diamond.yaml: top; left needs top (get_attr), right needs it (depends_on);
# bottom needs left and right (get_attr of both).
test_graph_dot_has_exactly_the_templates_nodes_and_edges() {
    local name dot
    name=$(stack_name graph-dot)
    graph_stack "$name" "$DATA/stacks/diamond.yaml"
    dot=$(ctl graph "$name")
    assert_eq "digraph \"$name\" {" "$(head -1 <<<"$dot")" "the first line"
    assert_eq "$(printf '%s\n' bottom left right top)" "$(graph_nodes "$dot")" "the nodes"
    assert_eq "$(printf '%s\n' 'bottom left' 'bottom right' 'left top' 'right top')" \
        "$(graph_edges "$dot")" "the edges (dependent -> dependency)"
    assert_match '"left" \[label="left\\nOS::Heat::TestResource\\nCREATE_COMPLETE", fillcolor="palegreen"\]' \
        "$dot" "left's label and colour"
    assert_eq "$dot" "$(ctl graph "$name" -o dot)" "-o dot is the default"
}

# slow takes 60 s; after_slow waits for it; fast1 <- fast2 do not. The
# stack is deleted once drawn (not waited for).
test_graph_colours_a_stack_in_progress_by_status() {
    local name tpl dot
    name=$(stack_name graph-wip) tpl=$(mktemp --suffix .yaml)
    sed 's/create: 3$/create: 60/' "$DATA/stacks/wait.yaml" >"$tpl"
    ctl submit "$name" "$tpl" >/dev/null
    cv_wait_until 20 "fast2 to complete" graph_status_is "$name" fast2 CREATE_COMPLETE
    cv_wait_until 20 "slow to be in progress" graph_status_is "$name" slow CREATE_IN_PROGRESS
    dot=$(ctl graph "$name")
    ctl delete "$name" >/dev/null
    rm -f "$tpl"
    assert_match '"slow" \[label="slow\\nOS::Heat::TestResource\\nCREATE_IN_PROGRESS", fillcolor="yellow"\]' \
        "$dot" "slow, in progress"
    assert_match '"after_slow" \[label="[^"]*\\nINIT_COMPLETE", fillcolor="lightgrey"\]' \
        "$dot" "after_slow, waiting for slow"
    assert_match '"fast2" \[label="[^"]*\\nCREATE_COMPLETE", fillcolor="palegreen"\]' "$dot" "fast2"
    assert_eq "$(printf '%s\n' 'after_slow slow' 'fast2 fast1')" "$(graph_edges "$dot")" "the edges"
}

graph_status_is() { # NAME RESOURCE STATUS
    [ "$(ctl resources "$1" -o json | jq -r --arg r "$2" '.[] | select(.name == $r) | .status')" = "$3" ]
}

test_graph_svg_is_xml_with_every_node() {
    local name svg count
    name=$(stack_name graph-svg)
    svg=$(mktemp --suffix .svg)
    graph_stack "$name" "$DATA/stacks/chain.yaml"
    ctl graph "$name" -o svg >"$svg"
    xmllint --noout "$svg" || fail "the SVG is not well-formed XML"
    count=$(xmllint --xpath 'count(//*[local-name()="g"][@class="node"])' "$svg")
    assert_eq 4 "$count" "node groups in the SVG"
    for r in a b c d; do
        assert_eq "$r" "$(xmllint --xpath "string(//*[local-name()='g'][@class='node']/*[local-name()='title'][.='$r'])" "$svg")" \
            "node $r in the SVG"
    done
    assert_eq 3 "$(xmllint --xpath 'count(//*[local-name()="g"][@class="edge"])' "$svg")" \
        "edge groups in the SVG"
    rm -f "$svg"
}

test_graph_svg_without_graphviz_exits_1_saying_so() {
    local name out rc=0
    name=$(stack_name graph-nodot)
    graph_stack "$name" "$DATA/stacks/chain.yaml"
    out=$(PATH=/nonexistent "$CONVERGECTL" graph "$name" -o svg 2>&1) || rc=$?
    assert_eq 1 "$rc" "exit status"
    assert_match "cannot run Graphviz's dot .*apt-get install graphviz" "$out" "the error"
}

test_graph_unknown_stack_exits_2() {
    local out rc=0
    out=$(ctl graph "$(stack_name graph-none)" 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit status"
    assert_match "stack .*graph-none not found" "$out" "the error"
}

test_graph_bad_output_format_is_a_usage_error() {
    local out rc=0
    out=$(ctl graph whatever -o png 2>&1) || rc=$?
    assert_eq 2 "$rc" "exit status"
    assert_match "-o: expected dot or svg, not 'png'" "$out" "the error"
}

#!/usr/bin/env bash
# Generates a HOT stack of OS::Heat::None resources on stdout.
#   gen_stack.sh flat N      N independent resources
#   gen_stack.sh chain N     r0 <- r1 <- ... <- r(N-1)
#   gen_stack.sh fanout N    root <- N leaves <- sink
#   gen_stack.sh mixed N     chains of 12 hanging off fans of 9 (N rounded down to 110s)
#   gen_stack.sh flatparam N P   N independent resources; every P-th one is an
#                                OS::Heat::Value whose value follows parameter `ver`
#                                (update with -P ver=2 to update N/P of them in place;
#                                OS::Heat::None, as in Heat, never needs an update)
set -euo pipefail
shape=${1:?shape: flat|chain|fanout|mixed|flatparam}
n=${2:?count}
[[ $n =~ ^[0-9]+$ ]] || { echo "count must be a number" >&2; exit 2; }
every=${3:-10}
[[ $every =~ ^[1-9][0-9]*$ ]] || { echo "P must be a positive number" >&2; exit 2; }
awk -v shape="$shape" -v n="$n" -v every="$every" '
BEGIN {
  print "heat_template_version: 2018-08-31"
  print "description: generated " shape " stack of " n " resources"
  if (shape == "flatparam") print "parameters:\n  ver: {type: string, default: \"1\"}"
  print "resources:"
  if (shape == "flatparam") {
    for (i = 0; i < n; i++) {
      if (i % every == 0)
        printf "  r%d:\n    type: OS::Heat::Value\n    properties: {value: {get_param: ver}}\n", i
      else
        printf "  r%d:\n    type: OS::Heat::None\n", i
    }
  } else if (shape == "flat") {
    for (i = 0; i < n; i++) printf "  r%d:\n    type: OS::Heat::None\n", i
  } else if (shape == "chain") {
    for (i = 0; i < n; i++) {
      printf "  r%d:\n    type: OS::Heat::None\n", i
      if (i > 0) printf "    depends_on: r%d\n", i - 1
    }
  } else if (shape == "fanout") {
    print "  root:\n    type: OS::Heat::None"
    for (i = 0; i < n; i++) printf "  r%d:\n    type: OS::Heat::None\n    depends_on: root\n", i
    printf "  sink:\n    type: OS::Heat::None\n    depends_on: ["
    for (i = 0; i < n; i++) printf "%sr%d", (i ? ", " : ""), i
    print "]"
  } else if (shape == "mixed") {
    groups = int(n / 110)
    for (g = 0; g < groups; g++) {
      printf "  g%d_root:\n    type: OS::Heat::None\n", g
      for (f = 0; f < 9; f++) {
        for (c = 0; c < 12; c++) {
          printf "  g%d_f%d_c%d:\n    type: OS::Heat::None\n", g, f, c
          if (c == 0) printf "    depends_on: g%d_root\n", g
          else printf "    depends_on: g%d_f%d_c%d\n", g, f, c - 1
        }
      }
      printf "  g%d_sink:\n    type: OS::Heat::None\n    depends_on: [", g
      for (f = 0; f < 9; f++) printf "%sg%d_f%d_c11", (f ? ", " : ""), g, f
      print "]"
    }
  } else {
    print "unknown shape " shape > "/dev/stderr"; exit 2
  }
}'

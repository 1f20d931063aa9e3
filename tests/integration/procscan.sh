#!/usr/bin/env bash
# procscan.sh — the replica processes running on this machine, found the way
# a person would check: by the CONVERGE_* variables in /proc/PID/environ
# (docs/services.md: every replica process gets CONVERGE_INDEX, _NAME, _NODE,
# _SERVICE, _STACK). Used by the integration tests and the chaos suite.
#
#   procscan.sh once STACK_NAME...     one line per replica process of the stacks:
#                                      "pid ppid name node index service stack starttime"
#   procscan.sh watch OUT STACK_NAME... every 100 ms (PROCSCAN_MS) until killed, appends
#                                      "t_ms pid name node" per process to OUT
#                                      (one "t_ms -" line per empty sample)
#   procscan.sh doubles OUT            the samples where one CONVERGE_NAME ran in
#                                      two processes at once: "t_ms name pid,pid nodes"
#
# A replica is a process tree: only its root counts (a process whose parent
# carries the same CONVERGE_NAME is a child of the replica, e.g. under sh -c).
# A process is one of STACK_NAME's replicas when its CONVERGE_NAME ends in
# ".STACK_NAME" (the replica name is <resource>-<index>.<stack name>).
set -uo pipefail

read -r -d '' PROCSCAN_PL <<'PERL'
use strict; use warnings; use Time::HiRes qw(time sleep);
my ($mode, $out, $ms, @stacks) = @ARGV;
my %want = map { $_ => 1 } @stacks;
sub scan {
    my %env; my @pids;
    opendir(my $d, "/proc") or return ();
    for my $pid (grep { /^\d+$/ } readdir $d) {
        open(my $f, "<", "/proc/$pid/environ") or next;
        local $/; my $raw = <$f>; close $f;
        next unless defined $raw && index($raw, "CONVERGE_NAME=") >= 0;
        my %e = map { my ($k, $v) = split /=/, $_, 2; ($k, $v // "") } grep { /^CONVERGE_/ } split /\0/, $raw;
        my $name = $e{CONVERGE_NAME} // next;
        my ($stack) = $name =~ /\.([^.]*)$/ or next;
        next unless $want{$stack};
        open(my $s, "<", "/proc/$pid/stat") or next;
        my $stat = <$s>; close $s;
        next unless defined $stat;
        $stat =~ s/^.*\) //;
        my @f = split / /, $stat;
        next if $f[0] eq "Z";   # a zombie is gone, its parent has not reaped it yet
        $env{$pid} = { %e, ppid => $f[1], start => $f[19] };
        push @pids, $pid;
    }
    closedir $d;
    # Roots only: a child of the replica's process shares its CONVERGE_NAME.
    return map { [$_, $env{$_}] } grep {
        my $p = $env{$env{$_}{ppid}};
        !($p && $p->{CONVERGE_NAME} eq $env{$_}{CONVERGE_NAME})
    } @pids;
}
if ($mode eq "once") {
    for my $r (scan()) {
        my ($pid, $e) = @$r;
        print join(" ", $pid, $e->{ppid}, map({ $e->{$_} // "-" } qw(CONVERGE_NAME CONVERGE_NODE
            CONVERGE_INDEX CONVERGE_SERVICE CONVERGE_STACK)), $e->{start}), "\n";
    }
    exit 0;
}
open(my $o, ">>", $out) or die "procscan: $out: $!\n";
$o->autoflush(1);
while (1) {
    my $t = int(time() * 1000);
    my @r = scan();
    print $o "$t -\n" unless @r;
    print $o "$t $_->[0] $_->[1]{CONVERGE_NAME} ", ($_->[1]{CONVERGE_NODE} // "-"), "\n" for @r;
    sleep($ms / 1000);
}
PERL

case ${1:-} in
once)
    shift
    exec perl -e "$PROCSCAN_PL" once - 0 "$@"
    ;;
watch)
    out=${2:?usage: procscan.sh watch OUT STACK_NAME...}
    shift 2
    exec perl -e "$PROCSCAN_PL" watch "$out" "${PROCSCAN_MS:-100}" "$@"
    ;;
doubles)
    awk '$2 != "-" { key = $1 SUBSEP $3; n[key]++; pids[key] = pids[key] (n[key] > 1 ? "," : "") $2
                     nodes[key] = nodes[key] (n[key] > 1 ? "," : "") $4 }
         END { for (k in n) if (n[k] > 1) { split(k, a, SUBSEP); print a[1], a[2], pids[k], nodes[k] } }' \
        "${2:?usage: procscan.sh doubles OUT}" | sort -n
    ;;
*)
    sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac

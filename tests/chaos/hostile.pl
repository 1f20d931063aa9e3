#!/usr/bin/perl
# hostile.pl OUTDIR COUNT SEED [STACK_ID TRAVERSAL] — writes COUNT malformed or
# hostile Kafka messages for the workers, one file per message (its exact
# bytes), half for converge.check and half for converge.observe, named
# NNNN.TOPIC.CATEGORY, and OUTDIR/manifest ("FILE TOPIC CATEGORY" lines).
# Every one of them must end in converge.dead: none is a job a worker may act on.
# With STACK_ID and TRAVERSAL (a real stack in progress) all COUNT are
# instead well-formed jobs of that traversal for resources the stack does not
# have (category unknown_resource).
# Core Perl only; msgpack written by hand.
use strict;
use warnings;

my ($dir, $count, $seed, $real_stack, $real_trav) = @ARGV;
die "usage: hostile.pl OUTDIR COUNT SEED [STACK_ID TRAVERSAL]\n" unless defined $seed;
srand($seed);
mkdir $dir;

# ---- msgpack
sub mp_uint {
    my $n = shift;
    return chr($n) if $n < 128;
    return "\xcc" . chr($n) if $n < 256;
    return "\xcd" . pack('n', $n) if $n < 65536;
    return "\xce" . pack('N', $n) if $n < 4294967296;
    return "\xcf" . pack('Q>', $n);
}
sub mp_str {
    my $s = shift;
    my $l = length $s;
    return chr(0xa0 | $l) . $s if $l < 32;
    return "\xd9" . chr($l) . $s if $l < 256;
    return "\xda" . pack('n', $l) . $s if $l < 65536;
    return "\xdb" . pack('N', $l) . $s;
}
sub mp_bin { my $s = shift; my $l = length $s;
    return $l < 256 ? "\xc4" . chr($l) . $s : "\xc6" . pack('N', $l) . $s; }
sub mp_map_hdr { my $n = shift; return $n < 16 ? chr(0x80 | $n) : "\xde" . pack('n', $n); }
sub mp_arr_hdr { my $n = shift; return $n < 16 ? chr(0x90 | $n) : "\xdc" . pack('n', $n); }
# A map from a list of [key, encoded value] pairs, in order.
sub mp_map { my @kv = @_; return mp_map_hdr(scalar @kv) . join('', map { mp_str($_->[0]) . $_->[1] } @kv); }

sub rand_bytes { my $n = shift; return join('', map { chr(int(rand(256))) } 1 .. $n); }
sub rand_hex { my $n = shift; return join('', map { sprintf('%x', int(rand(16))) } 1 .. $n); }
sub pick { return $_[int(rand(@_))]; }

# A well-formed job of the type that belongs on TOPIC.
sub job_fields {
    my ($topic, %o) = @_;
    my $stack = $o{s} // rand_hex(16);
    my $res = $o{r} // 'r' . int(rand(100000));
    if ($topic eq 'observe') {
        return (['v', mp_uint(1)], ['t', mp_uint(3)], ['s', mp_str($stack)],
            ['tr', mp_uint($o{tr} // 1 + int(rand(5)))], ['r', mp_str($res)],
            ['p', mp_uint(int(rand(2)))], ['ver', mp_uint(1 + int(rand(3)))]);
    }
    if ($o{stack_job} && rand() < 0.3) {
        return (['v', mp_uint(1)], ['t', mp_uint(1)], ['s', mp_str($stack)],
            ['tr', mp_uint($o{tr} // 1 + int(rand(5)))], ['k', mp_uint(int(rand(4)))]);
    }
    return (['v', mp_uint(1)], ['t', mp_uint(2)], ['s', mp_str($stack)],
        ['tr', mp_uint($o{tr} // 1 + int(rand(5)))], ['r', mp_str($res)], ['p', mp_uint(int(rand(2)))]);
}
sub job { my $topic = shift; return mp_map(job_fields($topic, @_)); }
# The job with field KEY's encoded value replaced (or added).
sub job_with {
    my ($topic, $key, $val) = @_;
    my @f = job_fields($topic);
    my $found = 0;
    for (@f) { if ($_->[0] eq $key) { $_->[1] = $val; $found = 1; } }
    push @f, [$key, $val] unless $found;
    return mp_map(@f);
}
sub job_without {
    my ($topic, $key) = @_;
    return mp_map(grep { $_->[0] ne $key } job_fields($topic));
}

# ---- the categories: name => sub(topic) returning the bytes
my @gens = (
    [random_bytes => sub { rand_bytes(1 + int(rand(300))) }],
    [random_map_header => sub { chr(0x80 | int(rand(16))) . rand_bytes(int(rand(60))) }],
    [truncated => sub { my $j = job($_[0]); substr($j, 0, 1 + int(rand(length($j) - 1))) }],
    [trailing_bytes => sub { job($_[0]) . rand_bytes(1 + int(rand(20))) }],
    [wrong_version => sub { job_with($_[0], 'v', mp_uint(pick(0, 2, 3, 7, 255, 65536, 4294967296, 18446744073709551615))) }],
    [missing_version => sub { job_without($_[0], 'v') }],
    [version_not_uint => sub { job_with($_[0], 'v', pick(mp_str('1'), "\xc0", "\xc3", "\xff", "\xcb" . pack('d>', 1.0))) }],
    [unknown_stack => sub { job($_[0], stack_job => 1) }],
    [unknown_stack_odd_id => sub { job($_[0], s => pick('x}:stack', '../../etc', '*', "{", 'ZZZZ' x 15, "a\nb", "\xff\xfe")) }],
    [huge_resource_name => sub { job($_[0], r => 'r' x (256 + int(rand(4000)))) }],
    [huge_stack_id => sub { job($_[0], s => 'a' x (64 + int(rand(1000)))) }],
    [huge_string_field => sub { job_with($_[0], 'r', mp_str('x' x (100000 + int(rand(400000))))) }],
    [huge_map => sub { my $n = 5000 + int(rand(5000)); "\xde" . pack('n', $n) . join('', map { mp_str("k$_") . mp_uint($_) } 1 .. $n) }],
    [deep_nesting => sub { my $d = 20 + int(rand(200)); ("\x91" x $d) . "\xc0" }],
    [container_bomb => sub { pick("\xdf\xff\xff\xff\xff", "\xdd\xff\xff\xff\xff", "\xdb\xff\xff\xff\xff", "\xc6\x7f\xff\xff\xff") . rand_bytes(int(rand(10))) }],
    [wrong_type_stack => sub { job_with($_[0], 's', pick(mp_uint(42), mp_bin('abc'), "\xc0", mp_arr_hdr(1) . mp_str('a'))) }],
    [wrong_type_traversal => sub { job_with($_[0], 'tr', pick(mp_str('1'), "\xff", "\xd0\x80", "\xcb" . pack('d>', 1.5), "\xc2")) }],
    [wrong_type_resource => sub { job_with($_[0], 'r', pick(mp_uint(7), "\xc0", mp_map_hdr(0))) }],
    [out_of_range => sub { my $t = shift; pick(job_with($t, 'p', mp_uint(2 + int(rand(250)))), job_with($t, 't', mp_uint(pick(0, 5, 99, 255, 256))), job_with($t, 'k', mp_uint(4 + int(rand(100))))) }],
    [missing_field => sub { my $t = shift; job_without($t, pick('t', 's', 'tr', $t eq 'observe' ? ('r', 'ver') : ())) }],
    [empty_strings => sub { my $t = shift; job_with($t, pick('s', 'r'), mp_str('')) }],
    [nul_in_string => sub { job_with($_[0], 'r', mp_str("a\0b")) }],
    [duplicate_key => sub { my @f = job_fields($_[0]); mp_map(@f, $f[2]) }],
    [non_string_key => sub { my @f = job_fields($_[0]); mp_map_hdr(@f + 1) . join('', map { mp_str($_->[0]) . $_->[1] } @f) . mp_uint(1) . mp_uint(2) }],
    [wrong_topic => sub { my $t = shift; $t eq 'check' ? job('observe') : job('check') }],
    [dead_letter_as_job => sub { mp_map(['v', mp_uint(1)], ['t', mp_uint(4)], ['why', mp_str('forged')], ['orig', mp_bin('x')]) }],
    [not_a_map => sub { pick(mp_str('hello'), mp_uint(1), "\xc0", mp_arr_hdr(2) . mp_uint(1) . mp_uint(2), "\xc3", mp_bin('bin')) }],
    [invalid_byte => sub { pick("\xc1", job($_[0]) . "\xc1", "\x82\xc1\xc1\xc1\xc1") }],
    [text => sub { pick('{"v":1,"t":2}', "not msgpack\n", 'DROP TABLE stacks;', "\r\n") }],
);
if (defined $real_stack) {
    # Only these, when a stack is named: generated once the stack exists.
    @gens = ([unknown_resource => sub { job($_[0], s => $real_stack, tr => $real_trav, r => 'no_such_' . rand_hex(8)) }]);
}

open(my $man, '>', "$dir/manifest") or die "$dir/manifest: $!";
for my $i (0 .. $count - 1) {
    my $topic = $i % 2 ? 'observe' : 'check';
    my ($name, $gen) = @{$gens[$i % @gens]};
    # A few empty messages; the rest from the categories in turn.
    my $empty = !defined $real_stack && $i % 97 == 96;
    my $bytes = $empty ? '' : $gen->($topic);
    $name = 'empty' if $empty;
    my $file = sprintf('%s/%04d.%s.%s', $dir, $i, $topic, $name);
    open(my $f, '>:raw', $file) or die "$file: $!";
    print $f $bytes;
    close $f;
    print $man "$file $topic $name\n";
}
close $man;

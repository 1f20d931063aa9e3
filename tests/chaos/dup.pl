#!/usr/bin/perl
# dup.pl TOPIC STATS_FILE -- KCAT_PRODUCER_COMMAND...
# Publishes every message of a Kafka topic a second time. Reads the output of
#   kcat -C -u -t TOPIC -o end -f '%p %K %S\n%k%s'
# on stdin (binary safe: the header gives the key and payload lengths) and
# produces each message again with its key suffixed by "~dup" (so it may land
# on another partition, and so its own copy is recognised and not duplicated
# again), in batches: what arrived within 20 ms (at most 2,000 messages) goes
# to one run of the producer command, which reads messages split by the
# delimiters below (kcat -P -l FILE -K KDELIM -D MDELIM; FILE is appended to
# the command). Counts are written to STATS_FILE after every batch:
# "seen N duplicated N skipped N failed N".
use strict;
use warnings;
use IO::Select;
use File::Temp qw(tempfile);

my ($topic, $stats, $sep, @producer) = @ARGV;
die "usage: dup.pl TOPIC STATS_FILE -- PRODUCER...\n" unless $sep && $sep eq '--' && @producer;
my $KDELIM = "\xc1\xc1=key=\xc1\xc1";
my $MDELIM = "\xc1\xc1=msg=\xc1\xc1\n";

my ($seen, $dups, $skipped, $failed) = (0, 0, 0, 0);
my @batch;
my $buf = '';
my $eof = 0;
my $sel = IO::Select->new(\*STDIN);
binmode STDIN;
$SIG{TERM} = sub { $eof = 1; };

sub write_stats {
    open(my $f, '>', "$stats.tmp") or return;
    print $f "seen $seen duplicated $dups skipped $skipped failed $failed\n";
    close $f;
    rename "$stats.tmp", $stats;
}

sub flush_batch {
    return unless @batch;
    my ($fh, $file) = tempfile('cvdupXXXXXX', TMPDIR => 1, UNLINK => 0);
    binmode $fh;
    print $fh join('', map { $_->[0] . $KDELIM . $_->[1] . $MDELIM } @batch);
    close $fh;
    my $rc = system(@producer, $file);
    unlink $file;
    if ($rc == 0) { $dups += @batch; } else { $failed += @batch; }
    @batch = ();
    write_stats();
}

# Parses complete records out of $buf.
sub parse {
    while (1) {
        my $nl = index($buf, "\n");
        return if $nl < 0;
        my ($part, $klen, $slen) = split(/ /, substr($buf, 0, $nl));
        return unless defined $slen;
        $klen = 0 if $klen < 0;
        my $plen = $slen < 0 ? 0 : $slen;
        return if length($buf) < $nl + 1 + $klen + $plen;
        my $key = substr($buf, $nl + 1, $klen);
        my $payload = substr($buf, $nl + 1 + $klen, $plen);
        substr($buf, 0, $nl + 1 + $klen + $plen) = '';
        if ($key =~ /~dup$/) {
            $skipped++;
            next;
        }
        $seen++;
        # A NULL or empty payload cannot be told apart by the delimiter format; skip it.
        next if $plen == 0 || index($payload, $MDELIM) >= 0 || index($key, $KDELIM) >= 0;
        push @batch, [$key . '~dup', $payload];
    }
}

write_stats();
while (!$eof) {
    my @ready = $sel->can_read(0.02);
    if (@ready) {
        my $n = sysread(STDIN, my $chunk, 1 << 16);
        if (!defined $n || $n == 0) { $eof = 1; last; }
        $buf .= $chunk;
        parse();
        flush_batch() if @batch >= 2000;
    } else {
        flush_batch();
    }
}
parse();
flush_batch();
write_stats();

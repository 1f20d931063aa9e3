#!/usr/bin/env bash
# The demo command: set everything up (packages, Kafka, build), start Redis,
# ZooKeeper, Kafka, 2 engines and 2 observers on loopback, submit
# examples/hello.yaml, and show the stack's status, outputs and events.
# The services keep running afterwards: `source .local/env` to use
# convergectl, `deploy/local/down.sh` to stop them.
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/local/up.sh --engines 2 --observers 2
# shellcheck disable=SC1091
source .local/env
name="hello-$(date +%s)"
echo
echo "\$ convergectl validate examples/hello.yaml"
build/convergectl validate examples/hello.yaml
echo "\$ convergectl submit $name examples/hello.yaml -P who=Converge --wait"
build/convergectl submit "$name" examples/hello.yaml -P who=Converge --wait --timeout 120
echo
echo "\$ convergectl status $name"
build/convergectl status "$name"
echo
echo "\$ convergectl resources $name"
build/convergectl resources "$name"
echo
echo "\$ convergectl events $name"
build/convergectl events "$name"
echo
echo "Services are still up. Try:  source .local/env; build/convergectl status $name -o json"
echo "Stop them with:              deploy/local/down.sh"

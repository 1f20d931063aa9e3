#!/usr/bin/env bash
# The demo command: set everything up (packages, Kafka, build), start Redis,
# Kafka (KRaft), 2 engines, 2 observers and a cluster of 9 node agents
# (3 fault domains x 3 upgrade domains) on loopback; submit examples/hello.yaml
# and show the stack's status, outputs and events; then deploy the service
# stack examples/web.yaml (3 replicas of converge-hello, real processes),
# ask one of its replicas over HTTP, and draw the cluster map.
# The services keep running afterwards: `source .local/env` to use
# convergectl, `deploy/local/down.sh` to stop them (and every replica).
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/local/up.sh --engines 2 --observers 2 --nodes 9
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

web="web-$(date +%s)"
echo
echo "\$ convergectl submit $web examples/web.yaml -P program=\$PWD/build/converge-hello --wait"
build/convergectl submit "$web" examples/web.yaml -P "program=$PWD/build/converge-hello" \
    --wait --timeout 120
echo
echo "\$ convergectl replicas $web"
build/convergectl replicas "$web"
endpoint=$(build/convergectl replicas "$web" -o json | jq -r '[.[] | .endpoint // empty][0] // empty')
if [[ -n $endpoint ]]; then
    echo
    echo "\$ curl http://$endpoint/"
    curl -sS --max-time 5 "http://$endpoint/"
fi
echo
echo "\$ convergectl nodes --map"
build/convergectl nodes --map
echo
echo "Services are still up. Try:  source .local/env; build/convergectl place --explain $web web"
if [[ -n ${CONVERGE_WEB_URL:-} ]]; then
    echo "The web console (docs/web.md): $CONVERGE_WEB_URL/#/stack/$name, the cluster map: $CONVERGE_WEB_URL/#/cluster"
fi
echo "Stop them (and every replica) with:  deploy/local/down.sh"

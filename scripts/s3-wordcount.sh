#!/bin/sh
# s3-wordcount.sh FILE... — wordcount over s3:// on a laptop: starts a local S3-compatible
# server (versitygw, built by `make versitygw` when bin/versitygw is missing) on a loopback
# port with a bucket holding FILE..., runs the wordcount example over s3://words/, and stops
# the server. The demo keys reach flint through the standard AWS environment, never the
# command line.
set -eu
[ $# -gt 0 ] || { echo "usage: $0 FILE..." >&2; exit 2; }
cd "$(dirname "$0")/.."
[ -x bin/versitygw ] || make versitygw >&2
root=$(mktemp -d)
trap 'kill $gw 2>/dev/null; rm -rf "$root"' EXIT
mkdir -p "$root/data/words" "$root/sidecar"
cp "$@" "$root/data/words/"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export AWS_ACCESS_KEY_ID=flint-demo-access AWS_SECRET_ACCESS_KEY=flint-demo-secret-key AWS_EC2_METADATA_DISABLED=true
ROOT_ACCESS_KEY=$AWS_ACCESS_KEY_ID ROOT_SECRET_KEY=$AWS_SECRET_ACCESS_KEY \
	bin/versitygw --region us-east-1 --port "127.0.0.1:$port" --quiet posix --sidecar "$root/sidecar" "$root/data" &
gw=$!
until curl -s -o /dev/null "http://127.0.0.1:$port/"; do sleep 0.2; done
go run ./cmd/flint submit --example wordcount --master 'local[2]' \
	--conf flint.s3.endpoint="http://127.0.0.1:$port" --conf flint.s3.pathStyleAccess=true --conf flint.s3.region=us-east-1 \
	-- --top 10 s3://words/

#!/bin/sh
# Records what the reference implementation (autossh-tunnel-dockerized) reads from each
# config of the corpus, with its own parser: tests/fixtures/reference-configs/NAME.yaml
# → NAME.reference.tsv (its parse_config output: remote_host, remote_port, local_port,
# direction, name, hash, interactive). The tests compare this product's reading with
# these files; rerun after adding a config to the corpus. The reference ran its parser
# under busybox sh; dash (Debian's sh) reads these files the same way as long as no
# value holds a backslash (dash's echo interprets them).
#
#   scripts/reference-hashes.sh /path/to/autossh-tunnel-dockerized   (a checkout of v2.3.1)
set -eu
ref=${1:?usage: scripts/reference-hashes.sh REFERENCE_CHECKOUT}
parser="$ref/scripts/config_parser.sh"
[ -f "$parser" ] || { echo "no $parser" >&2; exit 1; }
dir=$(dirname "$0")/../tests/fixtures/reference-configs
for f in "$dir"/*.yaml; do
	# A subshell per file: the parser is sourced, and only its parse_config is used.
	sh -c '. "$1"; parse_config "$2"' sh "$parser" "$f" >"${f%.yaml}.reference.tsv"
done
ls "$dir"/*.reference.tsv | wc -l

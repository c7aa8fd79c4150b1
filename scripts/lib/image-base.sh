#!/usr/bin/env bash
# Makes a local stand-in for the Dockerfile's base image (node:20-bookworm-slim) when the
# engine does not have one, for machines that cannot reach Docker Hub (see docs/docker.md,
# "Testing the image"): a Debian bookworm root file system from debootstrap, this machine's
# Node 20 and npm under /usr/local with Node's headers at /usr/local/include/node (where the
# official image has them, so node-gyp needs no download), and a `node` account with uid
# 1000 as in the official image. An image that is already there (the real one or an earlier
# stand-in) is kept.
#
#   scripts/lib/image-base.sh ENGINE [TAG]      ENGINE: podman or docker
set -euo pipefail

engine=${1:?usage: image-base.sh podman|docker [tag]}
tag=${2:-docker.io/library/node:20-bookworm-slim}

if "$engine" image inspect "$tag" >/dev/null 2>&1; then
  echo "base image: $tag is there, kept"
  exit 0
fi

node_bin=$(command -v node)
node_version=$("$node_bin" -p 'process.versions.node')
case $node_version in
  20.*) ;;
  *) echo "image-base: the stand-in needs this machine's Node 20, found $node_version at $node_bin" >&2; exit 1 ;;
esac
node_prefix=$("$node_bin" -p 'process.config.variables.node_prefix')
headers=$node_prefix/include/node
[ -f "$headers/node_version.h" ] || headers=/usr/include/node
[ -f "$headers/node_version.h" ] ||
  { echo "image-base: Node's headers (node_version.h) are not under $node_prefix/include/node or /usr/include/node" >&2; exit 1; }
npm_dir=$(dirname "$(dirname "$(realpath "$(command -v npm)")")")
[ -f "$npm_dir/package.json" ] || { echo "image-base: npm's folder not found (looked at $npm_dir)" >&2; exit 1; }

command -v debootstrap >/dev/null 2>&1 || {
  echo "installing: debootstrap"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
}

mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=$(mktemp -d /var/tmp/tm-base-XXXXXX)
trap 'rm -rf "$root"' EXIT
echo "base image: debootstrap --variant=minbase bookworm from $mirror (about a minute)"
debootstrap --variant=minbase bookworm "$root" "$mirror" >"$root.log" 2>&1 ||
  { tail -20 "$root.log" >&2; rm -f "$root.log"; echo "image-base: debootstrap failed" >&2; exit 1; }
rm -f "$root.log"

echo "base image: Node $node_version, npm and Node's headers under /usr/local, user node (uid 1000)"
install -D -m 755 "$node_bin" "$root/usr/local/bin/node"
mkdir -p "$root/usr/local/lib/node_modules" "$root/usr/local/include"
cp -a "$npm_dir" "$root/usr/local/lib/node_modules/npm"
ln -s ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
ln -s ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
cp -a "$headers" "$root/usr/local/include/node"
# The CA bundle of this machine: TLS to the npm registry may pass a proxy that it trusts.
install -D -m 644 /etc/ssl/certs/ca-certificates.crt "$root/usr/local/share/ca-certificates/host-bundle.crt"
chroot "$root" groupadd --gid 1000 node
chroot "$root" useradd --uid 1000 --gid node --create-home --shell /bin/bash node
rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*

tar -C "$root" -c . | "$engine" import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'ENV NODE_VERSION='"$node_version" \
  --change 'ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/host-bundle.crt' \
  --change 'CMD ["node"]' \
  - "$tag" >/dev/null
echo "base image: $tag made (a stand-in; it stays for the next run)"

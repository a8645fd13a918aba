#!/usr/bin/env bash
# Builds railyard's container images offline (see Containerfile and
# docs/src/labs-beyond-one-machine.md): a statically linked railyard (the
# gnu target with crt-static), then the switch image railyard:VERSION and the
# host image railyard-host:VERSION, both FROM scratch, with podman (else
# buildah). Prints each image's tag and size.
#
#   scripts/image.sh            both images
#   OCI_RUNTIME=crun scripts/image.sh   another OCI runtime (default: runc
#                                       when installed; crun refuses the
#                                       cgroup layout of some hosts)
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/packages.sh
mapfile -t missing < <(missing_packages podman=podman runc=runc strip=binutils readelf=binutils)
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q "ok installed" || missing+=(busybox-static)
install_packages image.sh "${missing[@]}"
if readelf -l /bin/busybox | grep -q INTERP; then
  echo "image.sh: /bin/busybox is dynamically linked (apt-get install busybox-static)" >&2
  exit 1
fi

version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)
target=x86_64-unknown-linux-gnu
# With --target, RUSTFLAGS reach only the target's crates, not build scripts
# or proc-macros, so the normal target directory is shared without rebuilds.
RUSTFLAGS="-C target-feature=+crt-static" \
  cargo build --release --target "$target" -p railyard-control --bin railyard
bin="${CARGO_TARGET_DIR:-target}/$target/release/railyard"
if readelf -l "$bin" | grep -q 'INTERP'; then
  echo "image.sh: $bin is dynamically linked" >&2
  exit 1
fi

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
# The release profile keeps line tables for profiling; the image does not.
strip -o "$ctx/railyard" "$bin"
cp /bin/busybox "$ctx/busybox"

runtime=${OCI_RUNTIME:-}
[[ -z $runtime ]] && command -v runc >/dev/null 2>&1 && runtime=runc
build() { # TARGET TAG
  if command -v podman >/dev/null 2>&1; then
    podman ${runtime:+--runtime "$runtime"} build --pull=never --target "$1" -t "$2" -f Containerfile "$ctx" >&2
  else
    buildah bud ${runtime:+--runtime "$runtime"} --pull=never --target "$1" -t "$2" -f Containerfile "$ctx" >&2
  fi
}
size() { # TAG
  if command -v podman >/dev/null 2>&1; then
    podman image inspect --format '{{.Size}}' "$1"
  else
    buildah inspect --type image --format '{{.Size}}' "$1" 2>/dev/null || echo "?"
  fi
}
for pair in switch=railyard host=railyard-host; do
  tag="${pair#*=}:$version"
  build "${pair%%=*}" "$tag"
  bytes=$(size "$tag")
  echo "$tag $bytes bytes ($(numfmt --to=iec "$bytes" 2>/dev/null || echo "$bytes"))"
done

#!/usr/bin/env bash
# Builds railyard's container images offline (see Containerfile and
# docs/src/labs-beyond-one-machine.md): a statically linked railyard (the
# gnu target with crt-static), then the switch image railyard:TAG and the
# host image railyard-host:TAG (TAG: the workspace version), both FROM
# scratch, with podman (else buildah). Prints each image's tag and size.
#
#   scripts/image.sh            both images, of the static release build
#   scripts/image.sh --binary FILE
#                               both images of FILE as given, with no build:
#                               for tests and development. A dynamically
#                               linked FILE (a debug build) brings its ELF
#                               interpreter and every library ldd lists,
#                               copied from this machine to the same paths.
#                               The published image is the static build.
#   scripts/image.sh --tag TAG  railyard:TAG and railyard-host:TAG instead
#                               of the version (the tests use test-PID so a
#                               user's railyard:VERSION is left alone)
#   OCI_RUNTIME=crun scripts/image.sh   another OCI runtime (default: runc
#                                       when installed; crun refuses the
#                                       cgroup layout of some hosts)
set -euo pipefail

usage() {
  echo "usage: scripts/image.sh [--binary FILE] [--tag TAG]" >&2
  exit 2
}
bin=
tag=
while (($#)); do
  case $1 in
    --binary) (($# >= 2)) || usage; bin=$(realpath -- "$2"); shift 2 ;;
    --tag) (($# >= 2)) || usage; tag=$2; shift 2 ;;
    *) usage ;;
  esac
done

cd "$(dirname "$0")/.."
[[ -n $tag ]] || tag=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)

source scripts/packages.sh
mapfile -t missing < <(missing_packages podman=podman runc=runc strip=binutils readelf=binutils)
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q "ok installed" || missing+=(busybox-static)
install_packages image.sh "${missing[@]}"
if readelf -l /bin/busybox | grep -q INTERP; then
  echo "image.sh: /bin/busybox is dynamically linked (apt-get install busybox-static)" >&2
  exit 1
fi

if [[ -z $bin ]]; then
  target=x86_64-unknown-linux-gnu
  # With --target, RUSTFLAGS reach only the target's crates, not build
  # scripts or proc-macros, so the normal target directory is shared
  # without rebuilds.
  RUSTFLAGS="-C target-feature=+crt-static" \
    cargo build --release --target "$target" -p railyard-control --bin railyard
  bin="${CARGO_TARGET_DIR:-target}/$target/release/railyard"
  if readelf -l "$bin" | grep -q 'INTERP'; then
    echo "image.sh: $bin is dynamically linked" >&2
    exit 1
  fi
elif [[ ! -x $bin ]]; then
  echo "image.sh: $bin is not an executable file" >&2
  exit 1
fi

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
# The context: rootfs/ (copied to the image's /) and busybox.
root="$ctx/rootfs"
mkdir -p "$root/usr/bin"
chmod 755 "$root"
# The release profile keeps line tables for profiling, a debug build much
# more; the image needs neither.
strip -o "$root/usr/bin/railyard" "$bin"
if readelf -l "$bin" | grep -q 'INTERP'; then
  # Dynamically linked: the interpreter and the libraries, at the paths
  # the binary and the interpreter look for them.
  interp=$(readelf -l "$bin" | sed -n 's/.*program interpreter: \(.*\)]/\1/p')
  if ldd "$bin" | grep -q 'not found'; then
    echo "image.sh: $bin needs libraries this machine lacks:" >&2
    ldd "$bin" >&2
    exit 1
  fi
  mapfile -t libs < <(ldd "$bin" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\//) print $i }')
  for lib in "$interp" "${libs[@]}"; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done
fi
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
  image="${pair#*=}:$tag"
  build "${pair%%=*}" "$image"
  bytes=$(size "$image")
  echo "$image $bytes bytes ($(numfmt --to=iec "$bytes" 2>/dev/null || echo "$bytes"))"
done

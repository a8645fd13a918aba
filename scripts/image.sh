#!/usr/bin/env bash
# Builds railyard's container images offline (see Containerfile and
# docs/src/labs-beyond-one-machine.md): a statically linked railyard (the
# gnu target with crt-static), then the switch image railyard:TAG and the
# host image railyard-host:TAG (TAG: the workspace version), both FROM
# scratch, with podman (else buildah), and with --frr the switch image with
# FRR, railyard-frr:TAG. Prints each image's tag and size.
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
#   scripts/image.sh --frr      also railyard-frr:TAG: the switch image
#                               plus this machine's Debian FRR (package
#                               frr): zebra, bgpd, bfdd, vtysh, their
#                               libraries, FRR's users and directories, for
#                               `routing bgp` topologies (railyard starts
#                               the daemons itself). Combines with the
#                               other options.
#   OCI_RUNTIME=crun scripts/image.sh   another OCI runtime (default: runc
#                                       when installed; crun refuses the
#                                       cgroup layout of some hosts)
set -euo pipefail

usage() {
  echo "usage: scripts/image.sh [--binary FILE] [--tag TAG] [--frr]" >&2
  exit 2
}
bin=
tag=
frr=
while (($#)); do
  case $1 in
    --binary) (($# >= 2)) || usage; bin=$(realpath -- "$2"); shift 2 ;;
    --tag) (($# >= 2)) || usage; tag=$2; shift 2 ;;
    --frr) frr=1; shift ;;
    *) usage ;;
  esac
done

cd "$(dirname "$0")/.."
[[ -n $tag ]] || tag=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)

source scripts/packages.sh
mapfile -t missing < <(missing_packages podman=podman runc=runc strip=binutils readelf=binutils)
dpkg-query -W -f='${Status}' busybox-static 2>/dev/null | grep -q "ok installed" || missing+=(busybox-static)
if [[ -n $frr ]]; then
  dpkg-query -W -f='${Status}' frr 2>/dev/null | grep -q "ok installed" || missing+=(frr)
fi
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
# copy_libraries ROOT FILE...: the ELF interpreter and every library ldd
# lists for the dynamically linked FILEs (executables or libraries), copied into ROOT at the paths the
# binaries and the interpreter look for them.
copy_libraries() {
  local root=$1 f lib
  shift
  local files=()
  for f in "$@"; do
    readelf -d "$f" | grep -q 'NEEDED' || continue
    if ldd "$f" | grep -q 'not found'; then
      echo "image.sh: $f needs libraries this machine lacks:" >&2
      ldd "$f" >&2
      exit 1
    fi
    files+=("$f")
    readelf -l "$f" | sed -n 's/.*program interpreter: \(.*\)]/\1/p'
  done > "$ctx/libs"
  ((${#files[@]})) || return 0
  ldd "${files[@]}" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^\// && $i !~ /:$/) print $i }' >> "$ctx/libs"
  sort -u -o "$ctx/libs" "$ctx/libs"
  while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done < "$ctx/libs"
}
copy_libraries "$root" "$bin"
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
images=(switch=railyard host=railyard-host)
if [[ -n $frr ]]; then
  # FRR's layer (frr/ in the context, copied over the switch image): the
  # daemons railyard starts (control/src/routing/daemons.rs), vtysh, which
  # loads their configuration, and everything they load at run time.
  fr="$ctx/frr"
  # FRR's own directories exist, root's (COPY does not keep owners):
  # railyard gives the daemons a directory of their own for sockets, PID
  # files and logs (beside its management socket, owned by frr).
  mkdir -p "$fr/usr/lib/frr" "$fr/usr/bin" "$fr/etc/frr" "$fr/var/run/frr" \
    "$fr/var/tmp/frr" "$fr/var/log/frr"
  for d in zebra bgpd bfdd; do
    cp -L "/usr/lib/frr/$d" "$fr/usr/lib/frr/$d"
  done
  cp -L /usr/bin/vtysh "$fr/usr/bin/vtysh"
  # vtysh (built --with-libpam) asks PAM's `frr` service to authenticate
  # and admit its user. Debian's service allows everyone (the vty sockets'
  # group is the real check) and leaves the account to the system's
  # `other`, which the image does not have: both are pam_permit here.
  # (libpam looks for modules in /lib/x86_64-linux-gnu/security, which in
  # the image is not /usr/lib's.)
  pam=/lib/x86_64-linux-gnu/security/pam_permit.so
  mkdir -p "$fr/etc/pam.d" "$fr$(dirname "$pam")"
  printf '%s\n' "auth sufficient pam_permit.so" "account sufficient pam_permit.so" \
    > "$fr/etc/pam.d/frr"
  cp -L "$pam" "$fr$pam"
  copy_libraries "$fr" "$fr/usr/lib/frr/"{zebra,bgpd,bfdd} "$fr/usr/bin/vtysh" "$pam"
  # The YANG models (FRR's and libyang's): the daemons have them built in
  # but look for the directory first and log its absence.
  mkdir -p "$fr/usr/share"
  cp -r /usr/share/yang "$fr/usr/share/yang"
  # Empty configurations: the daemons and vtysh look for them.
  : > "$fr/etc/frr/vtysh.conf"
  : > "$fr/etc/frr/frr.conf"
  # The accounts: root, and FRR's user and groups as this machine has them
  # (the daemons run as frr, which must be in frrvty).
  {
    echo "root:x:0:0:root:/root:/bin/false"
    getent passwd frr
  } > "$fr/etc/passwd"
  {
    echo "root:x:0:"
    getent group frr
    getent group frrvty
  } > "$fr/etc/group"
  images+=(frr=railyard-frr)
fi
for pair in "${images[@]}"; do
  image="${pair#*=}:$tag"
  build "${pair%%=*}" "$image"
  bytes=$(size "$image")
  echo "$image $bytes bytes ($(numfmt --to=iec "$bytes" 2>/dev/null || echo "$bytes"))"
done

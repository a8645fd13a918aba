# Finding and installing the Debian packages the tests and benchmarks run;
# sourced by test.sh and the benchmark scripts, not run.

# missing_packages CMD=PACKAGE...: prints, once each, the packages that
# provide the commands not found on PATH.
missing_packages() {
    local pair
    for pair in "$@"; do
        command -v "${pair%%=*}" >/dev/null 2>&1 || echo "${pair#*=}"
    done | sort -u
}

# install_packages WHO PACKAGE...: installs the packages with apt-get when
# run as root (refreshing the package lists first, which a fresh machine
# needs); otherwise says what is missing and fails, as it does when apt-get
# fails. WHO names the script in its messages.
install_packages() {
    local who=$1
    shift
    [[ $# -gt 0 ]] || return 0
    if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null 2>&1; then
        echo "$who: installing $*" >&2
        apt-get update -qq &&
            DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
    else
        echo "$who: missing $* (run as root to install)" >&2
        return 1
    fi
}

# Sourced by scripts/test, scripts/bench and .ci/run: make sure the Debian/Ubuntu packages a
# command needs are installed.
#
#   kvcache_require_packages PACKAGE...
#
# Each PACKAGE is an apt package this file knows how to check for (see kvcache_package_present).
# The missing ones are installed with apt-get when running as root, or through sudo when it
# is available, after printing the exact command; otherwise one line names the exact
# `apt-get install` to run and the calling script exits with status 1.
#
# KVCACHE_ASSUME_MISSING="pkg pkg": treat these packages as missing (to try this logic on a
# machine that has them; apt-get then finds them installed and changes nothing).

kvcache_script_name=${kvcache_script_name:-$(basename "$0")}

# Succeeds when the package's files (what the build or the tests use of it) are present.
kvcache_package_present() {
    case " ${KVCACHE_ASSUME_MISSING:-} " in *" $1 "*) return 1 ;; esac
    case "$1" in
        pkg-config) command -v pkg-config >/dev/null 2>&1 ;;
        libsqlite3-dev) command -v pkg-config >/dev/null 2>&1 && pkg-config --exists sqlite3 ;;
        # KVCacheRedis's system library target includes <hiredis/hiredis.h> and links -lhiredis.
        libhiredis-dev) [ -f /usr/include/hiredis/hiredis.h ] || [ -f /usr/local/include/hiredis/hiredis.h ] ;;
        xz-utils) command -v xz >/dev/null 2>&1 ;;
        gzip) command -v gzip >/dev/null 2>&1 ;;
        redis-server) command -v redis-server >/dev/null 2>&1 ;;
        redis-tools) command -v redis-cli >/dev/null 2>&1 ;;
        # The HTTP cache test suite (../shared/cache-tests) runs on node 18 or later, and
        # scores nginx's proxy_cache beside kvcache-proxy.
        nodejs) command -v node >/dev/null 2>&1 ;;
        nginx-light) command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] ;;
        *) echo "$kvcache_script_name: no check for package $1" >&2; return 1 ;;
    esac
}

kvcache_require_packages() {
    local missing=() package
    for package in "$@"; do
        kvcache_package_present "$package" || missing+=("$package")
    done
    [ "${#missing[@]}" -eq 0 ] && return 0

    local sudo=()
    if [ "$(id -u)" -ne 0 ]; then
        if command -v sudo >/dev/null 2>&1 && { sudo -n true 2>/dev/null || [ -t 0 ]; }; then
            sudo=(sudo)
        else
            echo "$kvcache_script_name: missing ${missing[*]}; install them with: sudo apt-get install -y ${missing[*]}" >&2
            exit 1
        fi
    fi
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "$kvcache_script_name: missing ${missing[*]} (the Debian/Ubuntu package names); install them with your system's package manager" >&2
        exit 1
    fi
    echo "$kvcache_script_name: installing ${missing[*]}: ${sudo[*]:+${sudo[*]} }apt-get install -y ${missing[*]}" >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
    for package in "${missing[@]}"; do
        case " ${KVCACHE_ASSUME_MISSING:-} " in *" $package "*) continue ;; esac
        if ! kvcache_package_present "$package"; then
            echo "$kvcache_script_name: $package is still missing after apt-get install" >&2
            exit 1
        fi
    done
}

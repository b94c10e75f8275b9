# Sourced by scripts/test and .ci/run: the Redis servers the remote level's tests run against.
#
#   kvcache_redis_start          a redis-server on a free loopback port; exports KVCACHE_REDIS_URL
#   kvcache_redis_cluster_start  a Redis Cluster of three masters; exports KVCACHE_REDIS_CLUSTER
#   kvcache_redis_stop           stops every server started here and removes their directory
#
# Servers are our own, on free loopback ports (never one already running here), without
# persistence, in one temporary directory. The caller stops them from an EXIT trap.

kvcache_script_name=${kvcache_script_name:-$(basename "$0")}
kvcache_redis_dir=""

# A random loopback port below 55535 that nothing listens on, and whose cluster bus port
# (+10000) is free too. (bash's /dev/tcp: a connection that succeeds means the port is taken.)
kvcache_free_port() {
    local port
    while true; do
        port=$((20000 + RANDOM % 25000))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null \
            && ! (exec 3<>"/dev/tcp/127.0.0.1/$((port + 10000))") 2>/dev/null; then
            echo "$port"
            return
        fi
    done
}

kvcache_redis_ping() {
    [ "$(redis-cli -p "$1" ping 2>/dev/null)" = "PONG" ]
}

# The servers' directory, made in the calling shell (kvcache_redis_server runs in a subshell).
kvcache_redis_make_dir() {
    [ -n "$kvcache_redis_dir" ] || kvcache_redis_dir=$(mktemp -d "${TMPDIR:-/tmp}/kvcache-redis.XXXXXX")
}

# kvcache_redis_server NAME [redis-server options...]: starts one server on a free port (a
# few attempts, in case another process took the port meanwhile) and prints the port.
kvcache_redis_server() {
    local name=$1 port attempt
    shift
    mkdir -p "$kvcache_redis_dir/$name"
    for attempt in 1 2 3 4 5; do
        port=$(kvcache_free_port)
        redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$kvcache_redis_dir/$name" \
            --daemonize yes --pidfile "$kvcache_redis_dir/$name.pid" --logfile "$kvcache_redis_dir/$name/redis.log" "$@" >&2 \
            || continue
        for _ in $(seq 1 100); do
            kvcache_redis_ping "$port" && break
            sleep 0.1
        done
        if kvcache_redis_ping "$port"; then
            echo "$port"
            return 0
        fi
        [ -f "$kvcache_redis_dir/$name.pid" ] && kill "$(cat "$kvcache_redis_dir/$name.pid")" 2>/dev/null || true
    done
    echo "$kvcache_script_name: redis-server ($name) did not start" >&2
    cat "$kvcache_redis_dir/$name/redis.log" >&2 2>/dev/null || true
    return 1
}

kvcache_redis_start() {
    local port
    kvcache_redis_make_dir
    port=$(kvcache_redis_server server) || exit 1
    export KVCACHE_REDIS_URL="redis://127.0.0.1:$port"
    echo "$kvcache_script_name: redis-server $(redis-server --version | sed -E 's/.*v=([0-9.]+).*/\1/') on $KVCACHE_REDIS_URL"
}

kvcache_redis_cluster_start() {
    local nodes=() port node i
    kvcache_redis_make_dir
    for i in 1 2 3; do
        port=$(kvcache_redis_server "cluster-$i" --cluster-enabled yes --cluster-config-file nodes.conf \
            --cluster-node-timeout 2000) || exit 1
        nodes+=("127.0.0.1:$port")
    done
    if ! redis-cli --cluster create "${nodes[@]}" --cluster-yes > "$kvcache_redis_dir/cluster-create.log" 2>&1; then
        cat "$kvcache_redis_dir/cluster-create.log" >&2
        echo "$kvcache_script_name: redis-cli --cluster create failed" >&2
        exit 1
    fi
    for node in "${nodes[@]}"; do
        for _ in $(seq 1 100); do
            redis-cli -p "${node##*:}" cluster info 2>/dev/null | grep -q 'cluster_state:ok' && break
            sleep 0.1
        done
        if ! redis-cli -p "${node##*:}" cluster info 2>/dev/null | grep -q 'cluster_state:ok'; then
            echo "$kvcache_script_name: the Redis Cluster did not come up ($node)" >&2
            exit 1
        fi
    done
    KVCACHE_REDIS_CLUSTER=$(IFS=,; echo "${nodes[*]}")
    export KVCACHE_REDIS_CLUSTER
    echo "$kvcache_script_name: Redis Cluster of three masters on $KVCACHE_REDIS_CLUSTER"
}

# Whether process PID is still running (a zombie has exited: it holds no files).
kvcache_pid_running() {
    kill -0 "$1" 2>/dev/null || return 1
    [ -r "/proc/$1/stat" ] || return 0
    ! grep -qE '^[0-9]+ \(.*\) Z' "/proc/$1/stat" 2>/dev/null
}

kvcache_redis_stop() {
    local pidfile pid pids=() _
    [ -n "$kvcache_redis_dir" ] && [ -d "$kvcache_redis_dir" ] || return 0
    for pidfile in "$kvcache_redis_dir"/*.pid; do
        [ -f "$pidfile" ] || continue
        pid=$(cat "$pidfile" 2>/dev/null) || continue
        [ -n "$pid" ] && pids+=("$pid")
        kill "$pid" 2>/dev/null || true
    done
    # A server logs its last lines after it is told to stop, reopening its log file: its
    # directory can only be removed once it has exited. (They are daemons, not our children,
    # so `wait` cannot see them: poll, then SIGKILL after 10 s.)
    for pid in ${pids[@]+"${pids[@]}"}; do
        for _ in $(seq 1 200); do
            kvcache_pid_running "$pid" || break
            sleep 0.05
        done
        if kvcache_pid_running "$pid"; then
            kill -9 "$pid" 2>/dev/null || true
            for _ in $(seq 1 100); do
                kvcache_pid_running "$pid" || break
                sleep 0.05
            done
        fi
    done
    rm -rf "$kvcache_redis_dir" || echo "$kvcache_script_name: could not remove $kvcache_redis_dir" >&2
    kvcache_redis_dir=""
}

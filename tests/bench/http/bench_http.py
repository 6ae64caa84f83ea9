#!/usr/bin/python3
"""ratelab-cli serve against nginx limit_req, and serve on Redis against serve on memory, on
loopback, in the same run.

Every server decides the same limit (nginx limit_req semantics: rate and burst, nodelay) keyed by
an X-Client header that wrk draws from 10^6 values per request, each value its own bucket (serve's
key budget is off, as nginx has none: with it, every key past the 128th of wrk's one address
would be charged to that address's bucket), one event loop (nginx: one worker) per core: nginx,
`serve` on its memory store, and `serve` on a redis-server the script starts (a unix socket, no
persistence). The rounds rotate the order of the servers so that the
load of a shared machine falls on each alike. Per round and server: requests per second from
wrk, and the CPU time the server's processes used (utime + stime from /proc; for serve on Redis,
redis-server's too) per request. Prints one line per round and ends with

  summary serve_rps_ratio=R serve_cpu_ratio=C redis_rps_ratio=D

the medians over the rounds of serve/nginx requests per second (>= 1.0 is the target), of
serve/nginx CPU seconds per request (<= 1.0 is the target) and of serve on Redis / serve on
memory requests per second (>= 0.6 is the target). Store errors of serve on Redis (a call past
--store-timeout-ms answers by on_store_error, fail open here, without Redis) are read from its
/metrics after each round and printed: a round with any is not a measure of Redis.

usage: tests/bench/http/bench_http.py [--cli build/app/cli/ratelab-cli] [--rounds 5]
         [--seconds 5] [--connections 64] [--threads N] [--mode origin|auth] [--no-nginx]
         [--no-redis] [--store-timeout-ms 500]
"""

import argparse
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))

RATE = 100    # requests per second per client
BURST = 20    # requests over the rate a client may send at once
KEYS = 1_000_000


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port, process, timeout=10.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError("server exited with %d" % process.returncode)
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("port %d never opened" % port)


def cpu_seconds(pids):
    """utime + stime of the processes, in seconds."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except FileNotFoundError:
            pass
    return total / ticks


def process_tree(pid):
    pids = [pid]
    try:
        out = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout
        pids += [int(p) for p in out.split()]
    except OSError:
        pass
    return pids


def wrk(port, seconds, connections, threads, script):
    out = subprocess.run(
        ["wrk", "-t%d" % threads, "-c%d" % connections, "-d%ds" % seconds, "-s", script,
         "http://127.0.0.1:%d/" % port],
        capture_output=True, text=True, check=True).stdout
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    errors = re.search(r"Socket errors: (.*)", out)
    return requests, rps, (errors.group(1) if errors else "")


def metric_sum(admin_port, name):
    """The sum of every sample of a counter on serve's /metrics."""
    with socket.create_connection(("127.0.0.1", admin_port), timeout=5) as c:
        c.sendall(b"GET /metrics HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
        data = b""
        while True:
            chunk = c.recv(65536)
            if not chunk:
                break
            data += chunk
    total = 0
    for line in data.decode().splitlines():
        if line.startswith(name + "{") or line.startswith(name + " "):
            total += float(line.rsplit(" ", 1)[1])
    return total


def measure(name, pid, port, args, script, extra_pids=()):
    pids = process_tree(pid) + list(extra_pids)
    before = cpu_seconds(pids)
    requests, rps, errors = wrk(port, args.seconds, args.connections, args.wrk_threads, script)
    used = cpu_seconds(pids) - before
    return {"name": name, "rps": rps, "requests": requests,
            "cpu_us_per_request": 1e6 * used / max(requests, 1), "errors": errors}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cli", default=os.path.join(ROOT, "build", "app", "cli", "ratelab-cli"))
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seconds", type=int, default=5)
    p.add_argument("--connections", type=int, default=64)
    p.add_argument("--threads", type=int, default=os.cpu_count(),
                   help="event loops of serve and nginx workers (default: one per core)")
    p.add_argument("--wrk-threads", type=int, default=2)
    p.add_argument("--mode", choices=["origin", "auth"], default="origin")
    p.add_argument("--no-nginx", action="store_true", help="leave nginx out")
    p.add_argument("--no-redis", action="store_true", help="leave serve on Redis out")
    p.add_argument("--store-timeout-ms", type=int, default=500,
                   help="serve on Redis: the bound on each store call (default 500)")
    args = p.parse_args()
    tools = ["wrk"] + ([] if args.no_nginx else ["nginx"]) + ([] if args.no_redis else
                                                               ["redis-server"])
    for tool in tools:
        if not shutil.which(tool) and not os.path.exists("/usr/sbin/" + tool):
            sys.exit("bench_http: %s is not installed (scripts/setup-debian.sh)" % tool)

    work = tempfile.mkdtemp(prefix="ratelab-bench-http-")
    script = os.path.join(work, "keys.lua")
    with open(script, "w") as f:
        f.write("math.randomseed(os.time())\n"
                "request = function()\n"
                "  return wrk.format('GET', '/', {['X-Client'] = tostring(math.random(1, %d))})\n"
                "end\n" % KEYS)
    policy_text = """{
  "version": 1,
  "store": %s,
  "policies": [ {
    "name": "bench", "match": { "path_prefix": "/" },
    "algorithm": "leaky_bucket", "capacity": %d, "refill_per_second": %d, "nodelay": true,
    "key": { "source": "header", "header": "x-client" },
    "budget": { "enabled": false },
    "headers": "ietf"
  } ]
}
"""
    policy = os.path.join(work, "policy.json")
    with open(policy, "w") as f:
        f.write(policy_text % ('{ "kind": "memory", "max_buckets": 2000000 }', BURST, RATE))
    redis_socket = os.path.join(work, "redis.sock")
    redis_policy = os.path.join(work, "policy-redis.json")
    with open(redis_policy, "w") as f:
        f.write(policy_text % ('{ "kind": "redis", "url": "unix://%s" }' % redis_socket,
                               BURST, RATE))
    nginx_port, serve_port, redis_serve_port, admin_port = (free_port(), free_port(),
                                                            free_port(), free_port())
    for d in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"):
        os.makedirs(os.path.join(work, d), exist_ok=True)
    temps = "".join("    %s_temp_path %s/%s;\n" % (d, work, d)
                    for d in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    with open(os.path.join(work, "nginx.conf"), "w") as f:
        f.write("""daemon off;
worker_processes %d;
pid %s/nginx.pid;
error_log %s/error.log;
events { worker_connections 4096; }
http {
%s    access_log off;
    limit_req_zone $http_x_client zone=clients:256m rate=%dr/s;
    limit_req_status 429;
    server {
        listen 127.0.0.1:%d reuseport;
        location / { limit_req zone=clients burst=%d nodelay; empty_gif; }
    }
}
""" % (args.threads, work, work, temps, RATE, nginx_port, BURST))

    procs = []
    servers = []  # (name, process, port, extra pids whose CPU counts)

    def serve_on(policy_file, port, log, extra=()):
        proc = subprocess.Popen([args.cli, "serve", "--policy", policy_file, "--mode", args.mode,
                                 "--listen", "127.0.0.1:%d" % port,
                                 "--threads", str(args.threads), "--quiet"] + list(extra),
                                stdout=subprocess.DEVNULL,
                                stderr=open(os.path.join(work, log), "w"))
        procs.append(proc)
        return proc

    try:
        if not args.no_nginx:
            nginx = subprocess.Popen(["nginx", "-p", work, "-c", os.path.join(work, "nginx.conf"),
                                      "-e", os.path.join(work, "error.log")])
            procs.append(nginx)
            servers.append(("nginx", nginx, nginx_port, ()))
        serve = serve_on(policy, serve_port, "serve.log")
        servers.append(("serve", serve, serve_port, ()))
        redis = None
        if not args.no_redis:
            redis = subprocess.Popen(["redis-server", "--port", "0", "--unixsocket", redis_socket,
                                      "--unixsocketperm", "700", "--save", "", "--appendonly",
                                      "no", "--dir", work],
                                     stdout=open(os.path.join(work, "redis.log"), "w"))
            procs.append(redis)
            deadline = time.monotonic() + 10
            while not os.path.exists(redis_socket) and time.monotonic() < deadline:
                time.sleep(0.05)
            # Past --store-timeout-ms a decision is the policy's on_store_error (fail open
            # here), not Redis': a bound long enough for a loaded machine keeps the measure
            # Redis'; the store errors of each round are printed besides.
            extra = ["--admin", "127.0.0.1:%d" % admin_port,
                     "--store-timeout-ms", str(args.store_timeout_ms)]
            redis_serve = serve_on(redis_policy, redis_serve_port, "serve-redis.log", extra)
            servers.append(("serve-redis", redis_serve, redis_serve_port, (redis.pid,)))
        for name, proc, port, _ in servers:
            wait_port(port, proc)
        print("load before: %s" % open("/proc/loadavg").read().strip())
        print("wrk -t%d -c%d -d%ds, %d client keys, rate %d r/s burst %d, %d loops/workers, "
              "mode %s" % (args.wrk_threads, args.connections, args.seconds, KEYS, RATE, BURST,
                           args.threads, args.mode))
        rps_ratios, cpu_ratios, redis_ratios = [], [], []
        for r in range(args.rounds):
            order = servers[r % len(servers):] + servers[:r % len(servers)]
            if r % 2:
                order.reverse()
            results = {}
            for name, proc, port, extra in order:
                if name == "serve-redis":
                    errors_before = metric_sum(admin_port, "ratelab_store_errors_total")
                results[name] = measure(name, proc.pid, port, args, script, extra)
                if name == "serve-redis":
                    results[name]["store_errors"] = (
                        metric_sum(admin_port, "ratelab_store_errors_total") - errors_before)
            line = "round %d:" % (r + 1)
            for name, _, _, _ in servers:
                x = results[name]
                line += " %s %.0f req/s %.2f us/req |" % (name, x["rps"],
                                                           x["cpu_us_per_request"])
            s = results["serve"]
            if "nginx" in results:
                n = results["nginx"]
                rps_ratios.append(s["rps"] / n["rps"])
                cpu_ratios.append(s["cpu_us_per_request"] / n["cpu_us_per_request"])
                line += " rps ratio %.2f cpu ratio %.2f" % (rps_ratios[-1], cpu_ratios[-1])
            if "serve-redis" in results:
                d = results["serve-redis"]
                redis_ratios.append(d["rps"] / s["rps"])
                line += " redis/memory %.2f (store errors %d)" % (redis_ratios[-1],
                                                                  d["store_errors"])
            line += "".join(" [%s errors: %s]" % (x["name"], x["errors"])
                            for x in results.values() if x["errors"])
            print(line)
            sys.stdout.flush()
        print("load after: %s" % open("/proc/loadavg").read().strip())
        summary = "summary"
        if rps_ratios:
            summary += " serve_rps_ratio=%.2f serve_cpu_ratio=%.2f" % (
                statistics.median(rps_ratios), statistics.median(cpu_ratios))
        if redis_ratios:
            summary += " redis_rps_ratio=%.2f" % statistics.median(redis_ratios)
        print(summary)
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

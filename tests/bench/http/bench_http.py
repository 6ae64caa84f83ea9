#!/usr/bin/python3
"""ratelab-cli serve against nginx limit_req, on loopback, in the same run.

Both servers decide the same limit (nginx limit_req semantics: rate and burst, nodelay) keyed by
an X-Client header that wrk draws from 10^6 values per request, one event loop (nginx: one
worker) per core. The rounds alternate between the two servers so that the load of a shared
machine falls on both alike. Per round and server: requests per second from wrk, and the CPU time
the server's processes used (utime + stime from /proc) per request. Prints one line per round and
ends with

  summary serve_rps_ratio=R serve_cpu_ratio=C

the medians over the rounds of serve/nginx requests per second (>= 1.0 is the target) and of
serve/nginx CPU seconds per request (<= 1.0 is the target).

usage: tests/bench/http/bench_http.py [--cli build/app/cli/ratelab-cli] [--rounds 5]
         [--seconds 5] [--connections 64] [--threads N] [--mode origin|auth]
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


def measure(name, pid, port, args, script):
    pids = process_tree(pid)
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
    args = p.parse_args()
    for tool in ("wrk", "nginx"):
        if not shutil.which(tool) and not os.path.exists("/usr/sbin/" + tool):
            sys.exit("bench_http: %s is not installed (scripts/setup-debian.sh)" % tool)

    work = tempfile.mkdtemp(prefix="ratelab-bench-http-")
    script = os.path.join(work, "keys.lua")
    with open(script, "w") as f:
        f.write("math.randomseed(os.time())\n"
                "request = function()\n"
                "  return wrk.format('GET', '/', {['X-Client'] = tostring(math.random(1, %d))})\n"
                "end\n" % KEYS)
    policy = os.path.join(work, "policy.json")
    with open(policy, "w") as f:
        f.write("""{
  "version": 1,
  "store": { "kind": "memory", "max_buckets": 2000000 },
  "policies": [ {
    "name": "bench", "match": { "path_prefix": "/" },
    "algorithm": "leaky_bucket", "capacity": %d, "refill_per_second": %d, "nodelay": true,
    "key": { "source": "header", "header": "x-client" },
    "headers": "ietf"
  } ]
}
""" % (BURST, RATE))
    nginx_port, serve_port = free_port(), free_port()
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

    nginx = subprocess.Popen(["nginx", "-p", work, "-c", os.path.join(work, "nginx.conf"),
                              "-e", os.path.join(work, "error.log")])
    serve = subprocess.Popen([args.cli, "serve", "--policy", policy, "--mode", args.mode,
                              "--listen", "127.0.0.1:%d" % serve_port,
                              "--threads", str(args.threads), "--quiet"],
                             stdout=subprocess.DEVNULL,
                             stderr=open(os.path.join(work, "serve.log"), "w"))
    try:
        wait_port(nginx_port, nginx)
        wait_port(serve_port, serve)
        print("load before: %s" % open("/proc/loadavg").read().strip())
        print("wrk -t%d -c%d -d%ds, %d client keys, rate %d r/s burst %d, %d loops/workers, "
              "mode %s" % (args.wrk_threads, args.connections, args.seconds, KEYS, RATE, BURST,
                           args.threads, args.mode))
        rps_ratios, cpu_ratios = [], []
        for r in range(args.rounds):
            order = [("nginx", nginx.pid, nginx_port), ("serve", serve.pid, serve_port)]
            if r % 2:
                order.reverse()
            results = {name: measure(name, pid, port, args, script) for name, pid, port in order}
            n, s = results["nginx"], results["serve"]
            rps_ratios.append(s["rps"] / n["rps"])
            cpu_ratios.append(s["cpu_us_per_request"] / n["cpu_us_per_request"])
            print("round %d: nginx %.0f req/s %.2f us/req | serve %.0f req/s %.2f us/req | "
                  "rps ratio %.2f cpu ratio %.2f%s" % (
                      r + 1, n["rps"], n["cpu_us_per_request"], s["rps"],
                      s["cpu_us_per_request"], rps_ratios[-1], cpu_ratios[-1],
                      "".join(" [%s errors: %s]" % (x["name"], x["errors"])
                              for x in (n, s) if x["errors"])))
        print("load after: %s" % open("/proc/loadavg").read().strip())
        print("summary serve_rps_ratio=%.2f serve_cpu_ratio=%.2f" % (
            statistics.median(rps_ratios), statistics.median(cpu_ratios)))
    finally:
        for proc in (serve, nginx):
            proc.send_signal(signal.SIGTERM)
        for proc in (serve, nginx):
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

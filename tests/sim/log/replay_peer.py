#!/usr/bin/env python3
"""An independent peer for `ratelab-cli replay`: reads the fixture logs itself, keys each line
by the client it names (a trusted balancer's X-Forwarded-For walked right to left, IPv4 /32,
IPv6 /64), decides fixed window and token bucket in exact arithmetic, and compares every
decision row the CLI writes, by file and line.

usage: replay_peer.py RATELAB_CLI DATA_DIR
"""

import csv
import datetime
import decimal
import ipaddress
import json
import os
import re
import subprocess
import sys
import tempfile
from fractions import Fraction

TRUSTED = ipaddress.ip_network("10.0.0.0/8")
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def clf_micros(text):
    day, mon, rest = text.split("/", 2)
    year, hh, mm, ss_zone = rest.split(":", 3)
    ss, zone = ss_zone.split(" ")
    tz = datetime.timezone(
        (1 if zone[0] == "+" else -1) * datetime.timedelta(hours=int(zone[1:3]), minutes=int(zone[3:5])))
    t = datetime.datetime(int(year), MONTHS.index(mon) + 1, int(day), int(hh), int(mm), int(ss), tzinfo=tz)
    return int(t.timestamp()) * 1_000_000


def iso_micros(text):
    t = datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    epoch = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)
    delta = t - epoch
    return (delta.days * 86400 + delta.seconds) * 1_000_000 + delta.microseconds


def client_of(peer, xff):
    """The client a live request from `peer` with this X-Forwarded-For is keyed by."""
    address = ipaddress.ip_address(peer)
    if address not in TRUSTED or not xff or xff == "-":
        return address
    hops = [ipaddress.ip_address(h.strip()) for h in xff.split(",")]
    for hop in reversed(hops):
        if hop not in TRUSTED:
            return hop
    return hops[0]


def key_of(address):
    prefix = 32 if address.version == 4 else 64
    return str(ipaddress.ip_network(f"{address}/{prefix}", strict=False))


NGINX_MAIN = re.compile(r'^(\S+) - \S+ \[([^\]]+)\] "[^"]*" \d+ \S+ "[^"]*" "[^"]*" "([^"]*)"$')
COMBINED_START = re.compile(r"^(\S+) \S+ \S+ \[([^\]]+)\] ")


def read_nginx_main(path, opener):
    with opener(path) as f:
        for n, line in enumerate(f, 1):
            m = NGINX_MAIN.match(line.rstrip("\n"))
            yield n, clf_micros(m.group(2)), client_of(m.group(1), m.group(3))


def read_combined(path, opener):
    with opener(path) as f:
        for n, line in enumerate(f, 1):
            m = COMBINED_START.match(line)  # the rest may be cut off: only client and time count
            yield n, clf_micros(m.group(2)), client_of(m.group(1), None)


def read_caddy(path, opener):
    with opener(path) as f:
        for n, line in enumerate(f, 1):
            rec = json.loads(line, parse_float=decimal.Decimal)
            micros = int(decimal.Decimal(rec["ts"]) * 1_000_000)
            yield n, micros, client_of(rec["request"]["remote_ip"], None)


def read_iso_json(path, opener):
    with opener(path) as f:
        for n, line in enumerate(f, 1):
            rec = json.loads(line)
            yield n, iso_micros(rec["time"]), client_of(rec["client"]["ip"], None)


def gz_or_text(path):
    import gzip

    return gzip.open(path, "rt") if path.endswith(".gz") else open(path)


def fixed_window(quota, window_us):
    state = {}

    def decide(key, t):
        start, count = state.get(key, (None, 0))
        if start is None or t >= start + window_us:
            start, count = t, 0
        count += 1
        state[key] = (start, count)
        return count <= quota

    return decide


def token_bucket(capacity, per_second):
    state = {}

    def decide(key, t):
        tokens, last = state.get(key, (Fraction(capacity), t))
        tokens = min(Fraction(capacity), tokens + Fraction(t - last, 1_000_000) * per_second)
        allowed = tokens >= 1
        state[key] = (tokens - 1 if allowed else tokens, t)
        return allowed

    return decide


CASES = [
    ("nginx behind a balancer, two rotated gzip files",
     ["nginx-proxy.log.2.gz", "nginx-proxy.log.1.gz"], [], read_nginx_main),
    ("caddy", ["caddy.log"], ["--format", "caddy"], read_caddy),
    ("json, ISO-8601 times", ["iso-times.jsonl"],
     ["--field", "client=client.ip", "--field", "time=time", "--field", "method=req.method",
      "--field", "path=req.path"], read_iso_json),
    ("combined, a truncated user agent", ["truncated-agent.log"], [], read_combined),
]
POLICIES = [
    ("peer-fixed-window.json", lambda: fixed_window(3, 10_000_000)),
    ("peer-token-bucket.json", lambda: token_bucket(2, Fraction(1, 5))),
]


def main():
    cli, data = sys.argv[1], sys.argv[2]
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, files, args, reader in CASES:
            paths = [os.path.join(data, f) for f in files]
            lines = []
            for index, path in enumerate(paths):
                for n, micros, client in reader(path, gz_or_text):
                    lines.append((micros, index, n, key_of(client)))
            lines.sort(key=lambda x: (x[0], x[1], x[2]))
            for policy, make in POLICIES:
                decisions = os.path.join(tmp, "decisions.csv")
                run = subprocess.run([cli, "replay", *paths, *args, "--policy",
                                      os.path.join(data, policy), "--decisions", decisions, "--quiet"],
                                     capture_output=True, text=True)
                if run.returncode != 0:
                    print(f"FAIL {name} / {policy}: exit {run.returncode}: {run.stderr}")
                    failed += 1
                    continue
                with open(decisions) as f:
                    rows = list(csv.DictReader(f))
                decide = make()
                expected = [(paths[i], n, "ip:" + k.split("/")[0] if k.endswith("/32") else "ip:" + k,
                             "true" if decide(k, t) else "false") for t, i, n, k in lines]
                got = [(r["file"], int(r["line"]), r["key"], r["allowed"]) for r in rows]
                if got == expected and len(got) == len(lines):
                    passed += 1
                    throttled = sum(1 for e in expected if e[3] == "false")
                    print(f"PASS {name} / {policy}: {len(got)} rows agree ({throttled} refused)")
                else:
                    failed += 1
                    print(f"FAIL {name} / {policy}: {len(got)} rows, {len(expected)} expected")
                    for g, e in zip(got, expected):
                        if g != e:
                            print(f"  ratelab {g}\n  peer    {e}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

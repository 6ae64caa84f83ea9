#!/usr/bin/env python3
"""Writes fit-shape.log.gz: two minutes of nginx `main` lines behind a balancer (10.0.0.1, the
client in the trailing X-Forwarded-For field) for tst_log_fit. Deterministic (seeded):

  40 browsing clients   198.51.100.10-49, Poisson at 0.05-0.5 req/s, GET /api/items, 200
  1 heavy user          198.51.100.60, Poisson at 3 req/s, GET /api/items, 200
  1 page loader         198.51.100.61, 8 requests every 20 s, GET /static/app.js, 200
  2 scrapers            203.0.113.5 at 8 req/s and 203.0.113.6 at 6 req/s, GET /api/items, 200
  3 credential stuffers 203.0.113.20-22, 2 req/s, POST /login, 90% 401

python3 tests/data/logs/make_fit_shape.py tests/data/logs/fit-shape.log.gz
"""
import gzip
import random
import sys
import time

START = 1709294400  # 2024-03-01T12:00:00Z
SPAN = 120
rng = random.Random(11)
lines = []


def add(t, client, method, path, status):
    lines.append((t, client, method, path, status))


def poisson(client, rate, method="GET", path="/api/items"):
    t = rng.expovariate(rate)
    while t < SPAN:
        add(t, client, method, path, 200)
        t += rng.expovariate(rate)


for i in range(40):
    poisson("198.51.100.%d" % (10 + i), 0.05 + 0.45 * i / 39)
poisson("198.51.100.60", 3.0)
for k in range(SPAN // 20):
    for j in range(8):
        add(k * 20 + 3 + j * 0.05, "198.51.100.61", "GET", "/static/app.js", 200)
for client, rate in (("203.0.113.5", 8), ("203.0.113.6", 6)):
    for n in range(SPAN * rate):
        add(n / rate + 0.01, client, "GET", "/api/items", 200)
for c in range(3):
    for n in range(SPAN * 2):
        status = 401 if rng.random() < 0.9 else 200
        add(n / 2 + 0.2 + 0.1 * c, "203.0.113.%d" % (20 + c), "POST", "/login", status)

lines.sort(key=lambda x: x[0])
with gzip.GzipFile(sys.argv[1], "wb", mtime=0) as out:
    for t, client, method, path, status in lines:
        stamp = time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(START + int(t)))
        out.write(('10.0.0.1 - - [%s] "%s %s HTTP/1.1" %d 512 "-" "fixture/1.0" "%s"\n'
                   % (stamp, method, path, status, client)).encode())

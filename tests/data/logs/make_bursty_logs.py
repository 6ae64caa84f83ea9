#!/usr/bin/env python3
"""Writes the logs the fit's fidelity tests replay (tests/sim/fit/tst_fit_fidelity.cpp), with the
bursty structure real sites show. Deterministic (seeded); the same output on every run:

    python3 tests/data/logs/make_bursty_logs.py tests/data/logs

bursty-site.log.gz  two hours of a web site in common log format (whole-second times):
  1,700 light visitors   172.16.0.0/16; 1 to 4 visits each (most one), visits at random
                         times; a visit is 1 to 4 page views, a page view an HTML page and 2 to
                         10 assets within about a second, then 3 s to 10 min of reading
  4 heavy users          a long visit (20 to 60 minutes) of page views every 4 to 40 s
  3 crawlers             one request every 2 to 4 s for stretches of 20 to 90 minutes, pauses
                         between; one of them spends five minutes at two a second
  25 form bots           POST /contact five times in three seconds, then sleep 30 s to 20 min,
                         for a stretch of 10 to 110 minutes; some come back an hour later
bursty-api.csv.gz   an hour of a JSON API as CSV with millisecond times (ts_ms,client,...):
  500 app users          sessions of 3 to 8 calls within 300 ms as the app opens, then a call
                         or three every 2 s to 2 min while it is used; 1 to 3 sessions each
  4 integrations         poll every two seconds (jitter of 50 ms) with a batch of 20 calls in
                         two seconds every 5 to 15 minutes
  3 scrapers             5 to 10 calls a second for a minute, then five minutes asleep
  6 credential stuffers  POST /login three times in a second, then 10 s to 5 min asleep
week-apart.log      eight days of a quiet site: clients seen a few times days apart, one of
                    them every two days and then a week later, a visitor twice a week apart, a
                    bot posting twice in a second and then every 42.5 hours (what a fit must
                    turn into sessions, not a spacing of days)
"""
import gzip
import math
import os
import random
import sys
import time

OUT = sys.argv[1] if len(sys.argv) > 1 else "."
START = 1772352000  # 2026-03-01T08:00:00Z


def lognormal(rng, median, sigma, low, high):
    return min(high, max(low, median * math.exp(rng.gauss(0.0, sigma))))


def geometric(rng, p, most):
    n = 1
    while n < most and rng.random() > p:
        n += 1
    return n


def clf(t, client, method, path, status):
    stamp = time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(START + int(t)))
    return '%s - - [%s] "%s %s HTTP/1.1" %d 512\n' % (client, stamp, method, path, status)


def write_gz(name, lines):
    with gzip.GzipFile(os.path.join(OUT, name), "wb", mtime=0) as out:
        out.write("".join(lines).encode())


def site():
    rng = random.Random(41)
    span = 7200.0
    lines = []

    def add(t, client, method, path, status=200):
        if 0 <= t < span:
            lines.append((t, client, method, path, status))

    def page_view(t, client, page):
        add(t, client, "GET", "/page/%d" % page)
        for k in range(rng.randint(2, 10)):
            add(t + rng.uniform(0.05, 1.1), client, "GET", "/static/a%d.css" % (k % 7))

    for i in range(1700):
        client = "172.16.%d.%d" % (i // 250, i % 250 + 1)
        for _ in range(geometric(rng, 0.7, 4)):
            t = rng.uniform(0, span)
            for _ in range(rng.randint(1, 4)):
                page_view(t, client, rng.randint(1, 400))
                t += 1.2 + lognormal(rng, 25, 1.0, 3, 600)
    for i in range(4):
        client = "192.0.2.%d" % (10 + i)
        t = rng.uniform(0, span / 2)
        end = t + rng.uniform(1200, 3600)
        while t < end:
            page_view(t, client, rng.randint(1, 400))
            t += 1.2 + lognormal(rng, 9, 0.6, 4, 40)
    for i in range(3):
        client = "198.51.100.%d" % (20 + i)
        t = rng.uniform(0, 900)
        while t < span:
            stop = t + rng.uniform(1200, 5400)
            while t < stop:
                add(t, client, "GET", "/page/%d" % rng.randint(1, 5000))
                t += rng.uniform(2, 4)
            t += rng.uniform(300, 1800)
    t = rng.uniform(1000, 6000)
    for n in range(600):
        add(t + n * 0.5, "198.51.100.20", "GET", "/page/%d" % rng.randint(1, 5000))
    for i in range(25):
        client = "203.0.113.%d" % (40 + i)
        t = rng.uniform(0, span)
        stop = t + rng.uniform(600, 6600)
        while t < stop:
            for k in range(5):
                add(t + k * 0.75, client, "POST", "/contact", 200)
            t += 3 + lognormal(rng, 120, 1.0, 30, 1200)
        if i % 5 == 0:
            later = stop + rng.uniform(3600, 5400)
            for k in range(5):
                add(later + k * 0.75, client, "POST", "/contact", 200)

    lines.sort(key=lambda x: x[0])
    write_gz("bursty-site.log.gz", [clf(*x) for x in lines])


def api():
    rng = random.Random(43)
    span = 3600.0
    rows = []

    def add(t, client, method, path, status=200):
        if 0 <= t < span:
            rows.append((int(t * 1000), client, method, path, status))

    for i in range(500):
        client = "100.72.%d.%d" % (i // 250, i % 250 + 1)
        for _ in range(rng.randint(1, 3)):
            t = rng.uniform(0, span)
            for k in range(rng.randint(3, 8)):
                add(t + rng.uniform(0, 0.3), client, "GET", "/v1/open/%d" % k)
            t += 0.3
            for _ in range(rng.randint(1, 25)):
                t += lognormal(rng, 12, 1.0, 2, 120)
                for k in range(rng.randint(1, 3)):
                    add(t + k * rng.uniform(0.02, 0.1), client, "GET", "/v1/items")
    for i in range(4):
        client = "100.73.0.%d" % (i + 1)
        t = rng.uniform(0, 1)
        batch = rng.uniform(300, 900)
        while t < span:
            add(t, client, "GET", "/v1/poll")
            t += 2 + rng.uniform(-0.05, 0.05)
            if t > batch:
                for k in range(20):
                    add(t + k * 0.1, client, "POST", "/v1/batch")
                batch = t + rng.uniform(300, 900)
    for i in range(3):
        client = "100.74.0.%d" % (i + 1)
        t = rng.uniform(0, 600)
        while t < span:
            rate = rng.uniform(5, 10)
            for n in range(int(60 * rate)):
                add(t + n / rate, client, "GET", "/v1/items/%d" % rng.randint(1, 9999))
            t += 60 + 300
    for i in range(6):
        client = "100.75.0.%d" % (i + 1)
        t = rng.uniform(0, span)
        stop = t + rng.uniform(600, 2400)
        while t < stop:
            for k in range(3):
                add(t + k * 0.4, client, "POST", "/v1/login", 401 if rng.random() < 0.9 else 200)
            t += 1 + lognormal(rng, 40, 1.0, 10, 300)

    rows.sort(key=lambda x: x[0])
    text = ["ts_ms,client,method,path,status\n"]
    text += ["%d,%s,%s,%s,%d\n" % (START * 1000 + ms, c, m, p, s) for ms, c, m, p, s in rows]
    write_gz("bursty-api.csv.gz", text)


def week():
    rng = random.Random(47)
    day = 86400.0
    lines = []

    def visit(t, client, pages):
        for _ in range(pages):
            lines.append((t, client, "GET", "/", 200))
            for k in range(rng.randint(1, 5)):
                lines.append((t + rng.uniform(0.1, 1), client, "GET", "/s%d.png" % k, 200))
            t += lognormal(rng, 20, 0.5, 5, 90)

    # Every two days, then a week later: gaps of about 42 hours and a week.
    for day_at in (0.2, 1.9, 3.7, 5.5):
        visit(day_at * day, "198.51.100.7", 3)
    visit(8 * day - 3600, "198.51.100.7", 2)
    visit(0.5 * day, "198.51.100.8", 1)
    visit(7.5 * day, "198.51.100.8", 1)
    # A form bot: two posts in one second, then one every 42.5 hours, then a week later.
    for at in (0.1 * day, 0.1 * day + 0.5, 0.1 * day + 153059, 0.1 * day + 2 * 153059):
        lines.append((at, "198.51.100.9", "POST", "/contact", 200))
    lines.append((0.1 * day + 2 * 153059 + 7 * day, "198.51.100.9", "POST", "/contact", 200))
    for i in range(30):
        client = "203.0.113.%d" % (i + 1)
        for _ in range(rng.randint(1, 3)):
            visit(rng.uniform(0, 8 * day - 600), client, rng.randint(1, 3))
    lines.sort(key=lambda x: x[0])
    with open(os.path.join(OUT, "week-apart.log"), "w") as out:
        out.write("".join(clf(*x) for x in lines))


site()
api()
week()

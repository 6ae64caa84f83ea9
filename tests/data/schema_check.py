#!/usr/bin/python3
"""Judges JSON files with one of the schemas in resources/schema/ (python3-jsonschema, draft-07).

usage: schema_check.py SCHEMA FILE...
Prints one JSON object per file: {"file": ..., "verdict": "syntax" | "invalid" | "valid",
"errors": [...]}. "syntax" covers what ratelab's JSON layer refuses before any schema applies:
text that is not JSON or not UTF-8, duplicate keys, NaN/Infinity and numbers out of double
range, lone surrogates, strings or keys over 64 KiB, nesting deeper than 64, files over 16 MiB.
"""
import json
import math
import sys

import jsonschema

MAX_DOCUMENT = 16 << 20
MAX_STRING = 64 << 10
MAX_DEPTH = 64


class SyntaxProblem(Exception):
    pass


def no_duplicates(pairs):
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise SyntaxProblem("duplicate key %r" % key)
        seen.add(key)
    return dict(pairs)


def finite_float(text):
    value = float(text)
    if not math.isfinite(value):
        raise SyntaxProblem("number out of range: " + text)
    return value


def no_constant(name):
    raise SyntaxProblem("not JSON: " + name)


def check_string(s):
    if len(s.encode("utf-8", "surrogatepass")) > MAX_STRING:
        raise SyntaxProblem("string over 64 KiB")
    if any(0xD800 <= ord(c) <= 0xDFFF for c in s):
        raise SyntaxProblem("lone surrogate")


def check_limits(value, depth=0):
    # Iterative, so that deep input cannot overflow Python's stack either.
    stack = [(value, depth)]
    while stack:
        item, d = stack.pop()
        if isinstance(item, (dict, list)):
            if d + 1 > MAX_DEPTH:
                raise SyntaxProblem("nesting deeper than 64")
            children = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in children:
                if isinstance(key, str):
                    check_string(key)
                stack.append((child, d + 1))
        elif isinstance(item, str):
            check_string(item)


def judge(validator, path):
    with open(path, "rb") as f:
        data = f.read()
    if len(data) > MAX_DOCUMENT:
        return "syntax", ["file over 16 MiB"]
    try:
        text = data.decode("utf-8")
        if text.startswith("\ufeff"):
            text = text[1:]
        doc = json.loads(text, object_pairs_hook=no_duplicates, parse_float=finite_float,
                         parse_constant=no_constant)
        check_limits(doc)
    except (UnicodeDecodeError, ValueError, SyntaxProblem, RecursionError) as e:
        return "syntax", [str(e)[:200]]
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.absolute_path))
    if errors:
        return "invalid", ["/" + "/".join(str(p) for p in e.absolute_path) + ": " + e.message[:200]
                           for e in errors[:3]]
    return "valid", []


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft7Validator.check_schema(schema)
    validator = jsonschema.Draft7Validator(schema)
    for path in sys.argv[2:]:
        verdict, errors = judge(validator, path)
        print(json.dumps({"file": path, "verdict": verdict, "errors": errors}))


if __name__ == "__main__":
    main()

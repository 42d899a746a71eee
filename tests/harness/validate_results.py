#!/usr/bin/env python3
"""Validates memlab results files against the JSON Schema: validate_results.py SCHEMA FILE...

Exit 0 when every file is valid, 1 on the first invalid one (its path and the error on stderr),
77 when the jsonschema package is missing and CI is not set (ctest: skipped; under CI: 1).
"""
import json
import os
import sys

try:
    import jsonschema
except ImportError:
    print("jsonschema is not installed (pip install jsonschema; tools/setup.sh does)", file=sys.stderr)
    sys.exit(1 if os.environ.get("CI") else 77)

schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
for path in sys.argv[2:]:
    errors = sorted(validator.iter_errors(json.load(open(path))), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        print(f"{path}: {e.message} at {'/'.join(map(str, e.path)) or '(root)'}", file=sys.stderr)
        sys.exit(1)
print(f"{len(sys.argv) - 2} file(s) valid")

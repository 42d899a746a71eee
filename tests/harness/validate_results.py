#!/usr/bin/env python3
"""Validates memlab's JSON files against their JSON Schemas: validate_results.py SCHEMA... -- FILE...

Each file is validated against the schema whose `schema` constant (`memlab.results/1`, `memlab.check/1`,
...) its own "schema" field names; a file naming none of the schemas given is an error. With one schema
and no `--`, the old form: validate_results.py SCHEMA FILE...

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

args = sys.argv[1:]
if "--" in args:
    schema_paths, files = args[: args.index("--")], args[args.index("--") + 1:]
else:
    schema_paths, files = args[:1], args[1:]
validators = {}
for path in schema_paths:
    schema = json.load(open(path))
    jsonschema.Draft202012Validator.check_schema(schema)
    name = schema.get("properties", {}).get("schema", {}).get("const", path)
    validators[name] = jsonschema.Draft202012Validator(schema)
only = next(iter(validators.values())) if len(validators) == 1 else None
for path in files:
    doc = json.load(open(path))
    validator = validators.get(doc.get("schema")) if isinstance(doc, dict) else None
    if validator is None and only is not None:
        validator = only  # one schema given: every file is held to it (a wrong "schema" field is its error)
    if validator is None:
        print(f"{path}: its schema {doc.get('schema') if isinstance(doc, dict) else None!r} is none of "
              f"{', '.join(sorted(validators))}", file=sys.stderr)
        sys.exit(1)
    errors = sorted(validator.iter_errors(doc), key=lambda e: list(e.path))
    if errors:
        e = errors[0]
        print(f"{path}: {e.message} at {'/'.join(map(str, e.path)) or '(root)'}", file=sys.stderr)
        sys.exit(1)
print(f"{len(files)} file(s) valid")

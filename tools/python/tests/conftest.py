import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
sys.path.insert(0, os.path.join(HERE, ".."))

# Committed H100 results the plot and compare tests read (docs/results/h100/README.md has their commands).
FIXTURES = os.path.join(REPO, "docs", "results", "h100")
SCHEMA = os.path.join(REPO, "docs", "results.schema.json")

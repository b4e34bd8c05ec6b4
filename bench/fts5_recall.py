#!/usr/bin/env python3
"""The baseline of bench/hook_latency.py: recall with SQLite FTS5 in ~20 lines, as a person would
write it instead of talos. `fts5_recall.py HOME --build` indexes memory.md, skills/*.md and the
first user message of each .talos/sessions/*.jsonl once; `fts5_recall.py HOME QUERY` prints the
5 best rows (bm25 rank) holding any word of QUERY."""

import glob
import json
import os
import re
import sqlite3
import sys

home = sys.argv[1]
con = sqlite3.connect(os.path.join(home, "fts5.db"))
if sys.argv[2] == "--build":
    con.execute("CREATE VIRTUAL TABLE IF NOT EXISTS docs USING fts5(kind, text)")
    with open(os.path.join(home, "memory.md"), encoding="utf-8") as f:
        rows = [("fact", line[2:].strip()) for line in f if line.startswith("- ")]
    for path in glob.glob(os.path.join(home, "skills", "*.md")):
        with open(path, encoding="utf-8") as f:
            rows.append(("skill", f.read()))
    for path in glob.glob(os.path.join(home, ".talos", "sessions", "*.jsonl")):
        with open(path, encoding="utf-8") as f:
            msgs = [json.loads(line) for line in f if line.strip()]
        rows.append(("episode", next(m["content"] for m in msgs if m.get("role") == "user")))
    con.executemany("INSERT INTO docs VALUES (?, ?)", rows)
    con.commit()
    sys.exit()
match = " OR ".join(f'"{w}"' for w in re.findall(r"\w+", " ".join(sys.argv[2:])))
sql = "SELECT kind, text FROM docs WHERE docs MATCH ? ORDER BY rank LIMIT 5"
for kind, text in con.execute(sql, (match,)):
    print(f"- [{kind}] {text[:200]}")

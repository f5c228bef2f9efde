#!/usr/bin/env python3
"""scripts/splice_preloaded.py on the shipped H200 file: high and medium replaced by an export of
changed entries, highest kept byte for byte, an export of the wrong precisions refused; and with
--by-key one entry replaced and one added, every other kept byte for byte.

Usage: test_splice_preloaded.py SOURCE_DIR SCRATCH_DIR
"""
import importlib.util
import json
import os
import shutil
import subprocess
import sys

source, scratch = sys.argv[1], sys.argv[2]
os.makedirs(scratch, exist_ok=True)
shipped = os.path.join(source, "cache", "preloaded", "nvidia-h200-sm90.json")
script = os.path.join(source, "scripts", "splice_preloaded.py")
# The script's own reader of entries with their exact text, for the byte-for-byte checks.
spec = importlib.util.spec_from_file_location("splice_preloaded", script)
splice = importlib.util.module_from_spec(spec)
spec.loader.exec_module(splice)
target = os.path.join(scratch, "preloaded.json")
export = os.path.join(scratch, "export.json")
shutil.copy(shipped, target)

with open(shipped) as f:
    text = f.read()
doc = json.loads(text)
original_entries, _, _ = splice.entries_with_text(text, shipped)
fresh = [dict(e, winner_note="spliced") for e in doc["entries"] if e["precision"] != "highest"]
fresh = fresh[: len(fresh) - 1]  # one entry fewer than before
with open(export, "w") as f:
    json.dump({"entries": fresh, "format": doc["format"], "format_version": doc["format_version"]},
              f, indent=2, sort_keys=True)

subprocess.run([sys.executable, script, target, export, "high,medium"], check=True)
with open(target) as f:
    result_text = f.read()
result = json.loads(result_text)
highest = [e for e in doc["entries"] if e["precision"] == "highest"]
assert [e for e in result["entries"] if e["precision"] == "highest"] == highest
assert [e for e in result["entries"] if e["precision"] != "highest"] == fresh
assert len(result["entries"]) == len(highest) + len(fresh)
# Byte for byte: every kept entry's text is a substring of the result as it was of the original.
kept = 0
for entry, entry_text in original_entries:
    if entry["precision"] == "highest":
        assert entry_text in result_text, "a highest entry's text changed"
        kept += 1
assert kept == len(highest)

refused = subprocess.run([sys.executable, script, target, export, "high"],
                         capture_output=True, text=True)
assert refused.returncode != 0 and "not ['high']" in refused.stderr, refused.stderr

# --by-key on the shipped file: the high 4097 entry changed, a new shape added.
shutil.copy(shipped, target)
old_4097 = next(e for e in doc["entries"] if e["precision"] == "high" and e["m"] == 4097)
changed = dict(old_4097, tuned_at="2099-01-01T00:00:00Z")  # differs whatever the file holds
added = dict(old_4097, m=4098, n=4098, k=4098)
with open(export, "w") as f:
    json.dump({"entries": [changed, added], "format": doc["format"],
               "format_version": doc["format_version"]}, f, indent=2)
subprocess.run([sys.executable, script, target, export, "--by-key"], check=True)
with open(target) as f:
    by_key_text = f.read()
by_key = json.loads(by_key_text)["entries"]
assert len(by_key) == len(doc["entries"]) + 1
assert changed in by_key and added in by_key and old_4097 not in by_key
assert sum(1 for e in by_key if e["precision"] == "high" and e["m"] == 4097) == 1
same = 0
for entry, entry_text in original_entries:
    if entry != old_4097:
        assert entry_text in by_key_text, "an entry not re-tuned changed"
        same += 1
assert same == len(doc["entries"]) - 1
print(f"spliced {len(fresh)} entries beside {kept} kept byte for byte; a wrong precision list "
      f"refused; by key one replaced and one added beside {same} kept")

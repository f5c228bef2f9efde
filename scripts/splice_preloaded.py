#!/usr/bin/env python3
"""Replaces the entries of some precisions in a preloaded file with those of an export.

Usage: scripts/splice_preloaded.py PRELOADED EXPORT PRECISION[,PRECISION...]

PRELOADED is a shipped file (cache/preloaded/*.json), EXPORT what `tilemm-tune --export` wrote
after re-tuning those precisions on the same GPU model. The entries of the other precisions keep
their text byte for byte (so the diff shows only what was re-tuned), the named precisions' entries
come from EXPORT, and PRELOADED is rewritten in place. Both files must be the tilemm-tuning format
of the same version; EXPORT must hold entries of every named precision and of no other.

Re-tune with the current shipped file in place: a tuning of high or medium also times the shape's
highest winner, which it finds there (a file the build refuses, for example one whose variant names
an older build wrote, leaves it none).
"""
import json
import re
import sys

_SPACE = re.compile(r"\s*")
_SEPARATOR = re.compile(r"\s*,?")


def entries_with_text(text, path):
    """The file's entries, each with its exact text, and the text before and after the list."""
    key = '"entries": ['
    start = text.find(key)
    if start < 0:
        sys.exit(f"{path}: no entries list")
    decoder = json.JSONDecoder()
    pos = start + len(key)
    entries = []
    while True:
        pos = _SPACE.match(text, pos).end()
        if pos >= len(text):
            sys.exit(f"{path}: the entries list does not end")
        if text[pos] == "]":
            break
        try:
            entry, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as e:
            sys.exit(f"{path}: entry {len(entries)}: {e}")
        entries.append((entry, text[pos:end]))
        pos = _SEPARATOR.match(text, end).end()
    return entries, text[:start], text[pos:]


def main(argv):
    if len(argv) != 4:
        sys.exit(__doc__.strip().splitlines()[2])
    preloaded_path, export_path, names = argv[1], argv[2], set(argv[3].split(","))
    with open(preloaded_path) as f:
        preloaded = f.read()
    with open(export_path) as f:
        exported = f.read()
    head = json.loads(preloaded)
    other = json.loads(exported)
    for field in ("format", "format_version"):
        if head.get(field) != other.get(field):
            sys.exit(f"{field}: {preloaded_path} has {head.get(field)!r}, {export_path} "
                     f"{other.get(field)!r}")
    kept, before, after = entries_with_text(preloaded, preloaded_path)
    fresh, _, _ = entries_with_text(exported, export_path)
    fresh_precisions = {entry.get("precision") for entry, _ in fresh}
    if fresh_precisions != names:
        sys.exit(f"{export_path} holds precisions {sorted(map(str, fresh_precisions))}, "
                 f"not {sorted(names)}")
    texts = [text for entry, text in kept if entry.get("precision") not in names]
    texts += [text for _, text in fresh]
    result = before + '"entries": [\n    ' + ",\n    ".join(texts) + "\n  " + after
    json.loads(result)  # still one JSON document
    with open(preloaded_path, "w") as f:
        f.write(result)
    print(f"{preloaded_path}: {len(kept) - len(texts) + len(fresh)} entries of "
          f"{','.join(sorted(names))} replaced by {len(fresh)}; {len(texts)} in all")


if __name__ == "__main__":
    main(sys.argv)

#!/usr/bin/env python3
"""Replaces the entries of some precisions, or some entries, in a preloaded file with an export's.

Usage: scripts/splice_preloaded.py PRELOADED EXPORT PRECISION[,PRECISION...]
       scripts/splice_preloaded.py PRELOADED EXPORT --by-key

PRELOADED is a shipped file (cache/preloaded/*.json), EXPORT what `tilemm-tune --export` wrote
after re-tuning on the same GPU model. With precisions, their entries all come from EXPORT (which
must hold entries of every named precision and of no other); with --by-key each entry of EXPORT
replaces the one of the same device, precision, shape and class, or joins the file (a few shapes
re-tuned). Every other entry keeps its text byte for byte, so the diff shows only what was
re-tuned; PRELOADED is rewritten in place. Both files must be the same format version.

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


def key(entry):
    """What identifies a result: the cache's key without the versions (they are what changed)."""
    return tuple(entry.get(field) for field in
                 ("device_key", "precision", "candidate_set", "m", "n", "k", "problem_class"))


def main(argv):
    if len(argv) != 4:
        sys.exit("\n".join(__doc__.strip().splitlines()[2:4]))
    preloaded_path, export_path = argv[1], argv[2]
    by_key = argv[3] == "--by-key"
    names = set() if by_key else set(argv[3].split(","))
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
    if by_key:
        fresh_keys = {key(entry) for entry, _ in fresh}
        texts = [text for entry, text in kept if key(entry) not in fresh_keys]
        names = {str(entry.get("precision")) for entry, _ in fresh}
    else:
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

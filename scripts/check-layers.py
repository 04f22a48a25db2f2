#!/usr/bin/env python3
"""Checks that each folder of Sources/PrecisionTimer uses only the folders
below it (its layer or lower), as Sources/PrecisionTimer/README.md draws them.

It collects the top-level types each folder declares (struct, class, enum,
protocol, actor, typealias) and reports every file that names a type
declared in a folder above its own. Comments and string literals are not
read. Exit 1 on a violation.

    python3 scripts/check-layers.py
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent / "Sources" / "PrecisionTimer"

# Lowest first. A folder may use its own layer and every layer before it.
LAYERS = [
    ["Clock"],
    [".", "Support", "System"],
    ["Waiting", "Measuring"],
    ["Engine"],
    ["VirtualTime"],
    ["Scheduling"],
    ["Timers"],
]

# Top-level declarations only: a nested type is named through its parent.
DECL = re.compile(r"^(?:@[A-Za-z_]+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private|final|"
                  r"indirect|nonisolated)\s+)*(?:struct|class|enum|protocol|actor|typealias)\s+([A-Z][A-Za-z0-9_]*)",
                  re.MULTILINE)


def strip(text):
    """Swift source without comments and string literals (good enough here)."""
    text = re.sub(r'"""[\s\S]*?"""', '""', text)
    text = re.sub(r"/\*[\s\S]*?\*/", "", text)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    return text


def folder_of(path):
    rel = path.relative_to(ROOT)
    return rel.parts[0] if len(rel.parts) > 1 else "."


def main():
    level = {name: i for i, names in enumerate(LAYERS) for name in names}
    files = [p for p in ROOT.rglob("*.swift")]
    declared = {}  # type name -> folder
    sources = {}
    for p in files:
        folder = folder_of(p)
        if folder not in level:
            print(f"check-layers: {p.relative_to(ROOT)}: folder '{folder}' is in no layer")
            return 1
        text = strip(p.read_text())
        sources[p] = (folder, text)
        for name in DECL.findall(text):
            declared.setdefault(name, folder)
    violations = []
    for p, (folder, text) in sorted(sources.items()):
        for name, home in declared.items():
            if level[home] <= level[folder]:
                continue
            if re.search(rf"\b{name}\b", text):
                violations.append(f"{p.relative_to(ROOT)} ({folder}) uses {name} ({home})")
    for v in violations:
        print("check-layers:", v)
    print(f"check-layers: {len(violations)} uses of a folder above, in {len(files)} files")
    return 1 if violations else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env bash
# Checks the links of the documentation: every relative Markdown link and
# #anchor in docs/src/*.md and README.md must point at an existing file and,
# for an anchor, at a heading of that file (anchors as mdBook makes them:
# lowercase, spaces to '-', punctuation dropped, repeats numbered). Links in
# the book must stay inside docs/src, since the rendered book holds nothing
# else; every page in docs/src must be listed in SUMMARY.md. Exits 1 on the
# first run that finds anything, listing every broken link as FILE:LINE.
set -euo pipefail
cd "$(dirname "$0")/.."

exec python3 - "$@" <<'PY'
import os
import re
import sys
from urllib.parse import unquote

BOOK = os.path.normpath("docs/src")
FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
# [text](target) or [text](target "title"); images too. Nested brackets in
# the text are rare in these docs and not supported.
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")


def strip_code_spans(line):
    """The line with inline code replaced by spaces (links inside are not links)."""
    return CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def heading_text(raw):
    """A heading's text as rendered: code without backticks, links as their text."""
    text = CODE_SPAN.sub(lambda m: m.group(2), raw)
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"(\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1", r"\2", text)
    return text


def normalize_id(text):
    """mdBook's heading id (`id_from_content`): trimmed and lowercased;
    alphanumerics, '_' and '-' kept, whitespace to '-', the rest dropped."""
    out = []
    for ch in text.strip().lower():
        if ch.isalnum() or ch in "_-":
            out.append(ch)
        elif ch.isspace():
            out.append("-")
    return "".join(out)


def unique_id(base, used):
    """mdBook's `unique_id`: a repeated id gets the first free `-N` suffix."""
    if base not in used:
        used.add(base)
        return base
    n = 1
    while f"{base}-{n}" in used:
        n += 1
    used.add(f"{base}-{n}")
    return f"{base}-{n}"


def scan(path):
    """(anchors, links) of a Markdown file; links as (line number, target)."""
    anchors, links = set(), []
    in_fence = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            m = HEADING.match(line)
            if m:
                unique_id(normalize_id(heading_text(m.group(2))), anchors)
            plain = strip_code_spans(line)
            for m in INLINE.finditer(plain):
                links.append((n, m.group(1)))
            m = REFDEF.match(plain)
            if m:
                links.append((n, m.group(1)))
    return anchors, links


def is_external(target):
    return re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) is not None or target.startswith("//")


files = ["README.md"] + sorted(
    os.path.join(BOOK, f) for f in os.listdir(BOOK) if f.endswith(".md")
)
cache = {}


def anchors_of(path):
    if path not in cache:
        cache[path] = scan(path)[0]
    return cache[path]


errors = []
for src in files:
    in_book = os.path.normpath(os.path.dirname(src)).startswith(BOOK)
    for n, target in scan(src)[1]:
        if is_external(target):
            continue
        where = f"{src}:{n}: `{target}`"
        path, _, anchor = target.partition("#")
        path = unquote(path)
        if path.startswith("/"):
            errors.append(f"{where}: absolute path")
            continue
        dest = os.path.normpath(os.path.join(os.path.dirname(src), path)) if path else src
        if not os.path.exists(dest):
            errors.append(f"{where}: no such file {dest}")
            continue
        if in_book and not (dest == BOOK or dest.startswith(BOOK + os.sep)):
            errors.append(f"{where}: leaves docs/src, so the rendered book cannot follow it")
            continue
        if anchor:
            if not dest.endswith(".md"):
                errors.append(f"{where}: anchor into a file that is not Markdown")
            elif anchor not in anchors_of(dest):
                errors.append(f"{where}: no heading with anchor #{anchor} in {dest}")

summary = os.path.join(BOOK, "SUMMARY.md")
listed = {os.path.normpath(os.path.join(BOOK, unquote(t.partition("#")[0])))
          for _, t in scan(summary)[1] if not is_external(t)}
for page in files:
    if page.startswith(BOOK + os.sep) and page != summary and page not in listed:
        errors.append(f"{page}: not listed in {summary}")

for e in errors:
    print(e, file=sys.stderr)
if errors:
    print(f"check-docs: {len(errors)} broken link(s)", file=sys.stderr)
    sys.exit(1)
print(f"check-docs: {len(files)} files, every relative link and anchor resolves")
PY

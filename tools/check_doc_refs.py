#!/usr/bin/python3
"""Every citation of a Markdown document in the code resolves to a file of the repository.

A bare name (`exact-mode.md`) must be a file under docs/ (or beside the citing file); a path (`bench/README.md`)
is taken from the repository root or the citing file's folder. A section cited by number right after the name
(`graph-runtime.md section 3`, `tensors.md §10`, `sections 3-4`) must be a numbered heading of that file
(`## 3. ...`, `### 3.2 ...`), and a quoted heading right after it (`ops-norms.md "Reductions"`) must begin a
heading of that file. Citations of the founding documents outside the repository are written as
`onemodel/docs/NAME.md` or `../shared/...` and are not checked. Exit status 1 lists every citation that does
not resolve, with its file and line.

  tools/check_doc_refs.py [ROOT]
"""
import os
import re
import sys

ROOT = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..'))
SCAN = ['engine', 'bindings', 'web/src', 'node/src', 'tests', 'tools', 'bench', 'docs', 'README.md']
SKIP_DIRS = {'node_modules', 'build', 'dist', '.git', 'third_party'}
EXTS = ('.h', '.cc', '.cpp', '.ts', '.mjs', '.js', '.cjs', '.py', '.sh', '.md', '.txt', '.cmake')

CITE = re.compile(r'(?<![\w./-])((?:[\w.-]+/)*[\w-]+\.md)'
                  r'(?:\)|,)?(?:\s+(?:sections?|§)\s*(\d+(?:\.\d+)?)(?:\s*[-–]\s*(\d+))?'
                  r'|\s*,?\s+"([^"\n]+)"|\s+§\s*(\d+(?:\.\d+)?))?')
HEADING = re.compile(r'^#{1,4}\s+(.*?)\s*$')


def files():
    for entry in SCAN:
        path = os.path.join(ROOT, entry)
        if os.path.isfile(path):
            yield path
            continue
        for base, dirs, names in os.walk(path):
            dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
            for name in names:
                if name.endswith(EXTS):
                    yield os.path.join(base, name)


headings_cache = {}


def headings(path):
    if path not in headings_cache:
        with open(path, encoding='utf-8') as f:
            headings_cache[path] = [m.group(1) for m in map(HEADING.match, f) if m]
    return headings_cache[path]


def numbered(heads, number):
    return any(re.match(re.escape(number) + r'(\.|\s|$)', h) for h in heads)


def quoted(heads, text):
    text = text.strip().rstrip('.').lower()
    return any(re.sub(r'^[\d.]+\s*', '', h).lower().startswith(text) or h.lower().startswith(text) for h in heads)


def resolve(cited, citing):
    if cited.startswith(('onemodel/docs/', 'onemodel/cookbook/', 'shared/', '../')) or '/shared/' in cited:
        return 'outside'
    here = os.path.dirname(citing)
    if '/' in cited:
        for base in (ROOT, here):
            p = os.path.normpath(os.path.join(base, cited))
            if os.path.isfile(p):
                return p
        return None
    for p in (os.path.join(ROOT, 'docs', cited), os.path.join(here, cited), os.path.join(ROOT, cited)):
        if os.path.isfile(p):
            return p
    return None


def main():
    bad = []
    count = 0
    for path in sorted(files()):
        rel = os.path.relpath(path, ROOT)
        with open(path, encoding='utf-8', errors='replace') as f:
            lines = f.read().split('\n')
        for no, line in enumerate(lines, 1):
            # A citation's section may follow on the next line of a wrapped comment.
            text = line + ' ' + (lines[no].lstrip(' /#*') if no < len(lines) else '')
            for m in CITE.finditer(text):
                if m.start() >= len(line):
                    break
                cited, sec, sec_to, quote, sec2 = m.group(1), m.group(2), m.group(3), m.group(4), m.group(5)
                if cited.lower() in ('readme.md', 'changelog.md') and '/' not in cited:
                    continue
                count += 1
                target = resolve(cited, path)
                if target == 'outside':
                    continue
                if target is None:
                    bad.append(f'{rel}:{no}: {cited} is not a file of the repository')
                    continue
                heads = headings(target)
                for number in filter(None, [sec, sec2]):
                    numbers = [number]
                    if sec_to and '.' not in number:
                        numbers = [str(k) for k in range(int(number), int(sec_to) + 1)]
                    for n in numbers:
                        if not numbered(heads, n):
                            bad.append(f'{rel}:{no}: {cited} has no section {n}')
                if quote and not quoted(heads, quote):
                    bad.append(f'{rel}:{no}: {cited} has no heading "{quote}"')
    for b in bad:
        print(b)
    print(f'check_doc_refs: {count} citations, {len(bad)} unresolved')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())

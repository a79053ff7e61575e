#!/usr/bin/env bash
# The project's formatting: clang-format-14 (.clang-format) for the C++ of engine/, bindings/ and tests/, and
# Prettier (.prettierrc.json, an exact devDependency) for the TypeScript and JavaScript.
#   tools/format.sh           rewrite every file in place
#   tools/format.sh --check   list the files that differ and exit 1 if any does (run by ./tools/test.sh)
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${1:-}
cpp=$(git ls-files 'engine/*.cc' 'engine/*.h' 'bindings/*.cc' 'bindings/*.h' 'tests/*.cc' 'tests/*.h')
js=('web/**/*.{ts,mjs,js,cjs}' 'node/**/*.{ts,mjs,js,cjs}' 'tests/**/*.{ts,mjs,js,cjs}' 'tools/**/*.mjs' 'bench/**/*.mjs')
status=0
if [ "$mode" = --check ]; then
  bad=$(clang-format-14 --dry-run $cpp 2>&1 | grep -oE '^[^:]+:[0-9]+:[0-9]+: warning' | cut -d: -f1 | sort -u)
  if [ -n "$bad" ]; then
    echo "clang-format-14 would change:"; echo "$bad" | sed 's/^/  /'; status=1
  fi
  if ! npx --no-install prettier --list-different "${js[@]}" >/tmp/onemodel-prettier.$$ 2>&1; then
    echo "prettier would change:"; sed 's/^/  /' /tmp/onemodel-prettier.$$; status=1
  fi
  rm -f /tmp/onemodel-prettier.$$
  if ((status == 0)); then echo "format: every file is formatted"; fi
  exit $status
fi
clang-format-14 -i $cpp
npx --no-install prettier --write --log-level warn "${js[@]}"

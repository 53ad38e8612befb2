#!/usr/bin/env bash
# Run every benchmark script in benchmarks/ (bench_*.py), one after the other, each through
# benchmarks/_measure.py: a line per script with its exit status, wall and CPU time, peak RSS and the
# load before and after, and a table of those lines at the end. Arguments are passed to each script
# (e.g. --quick). Exits 1 when any script does: each exits 1 when one of its targets is missed.
# Python: $PYTHON, else the active virtual environment's, else the project's .venv when present, else python3.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
py="${PYTHON:-}"
if [[ -z "$py" ]]; then
    for candidate in "${VIRTUAL_ENV:+$VIRTUAL_ENV/bin/python}" "$here/../.venv/bin/python"; do
        if [[ -n "$candidate" && -x "$candidate" ]]; then py="$candidate"; break; fi
    done
fi
py="${py:-python3}"
summary="$(mktemp)"
trap 'rm -f "$summary"' EXIT
status=0
failed=()
for script in "$here"/bench_*.py; do
    echo "=== $(basename "$script") $*"
    if ! "$py" "$here/_measure.py" --summary "$summary" -- "$script" "$@"; then
        echo "=== $(basename "$script") FAILED" >&2
        failed+=("$(basename "$script")")
        status=1
    fi
    echo
done
echo "=== every script: exit, wall, CPU (user+system, with its children), peak RSS, load before -> after, date"
cat "$summary"
if ((status)); then
    echo "=== targets missed or errors in: ${failed[*]}" >&2
fi
exit "$status"

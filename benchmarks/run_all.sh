#!/usr/bin/env bash
# Run every benchmark script in benchmarks/ (bench_*.py), one after the other.
# Arguments are passed to each script (e.g. --quick). Python: $PYTHON, else the
# active virtual environment's, else the project's .venv when present, else python3.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
py="${PYTHON:-}"
if [[ -z "$py" ]]; then
    for candidate in "${VIRTUAL_ENV:+$VIRTUAL_ENV/bin/python}" "$here/../.venv/bin/python"; do
        if [[ -n "$candidate" && -x "$candidate" ]]; then py="$candidate"; break; fi
    done
fi
py="${py:-python3}"
status=0
for script in "$here"/bench_*.py; do
    echo "=== $(basename "$script") $*"
    if ! "$py" "$script" "$@"; then
        echo "=== $(basename "$script") FAILED" >&2
        status=1
    fi
    echo
done
exit "$status"

"""PyDTMC baseline for bench_exact.py: expected turns from square 0 of a dense turn matrix.

Runs inside ``benchmarks/.pydtmc-venv`` (PyDTMC pins an old numpy), which
``bench_exact.py`` makes on first use. Each argument is a ``.npy`` file
holding the dense ``(N+1) x (N+1)`` turn matrix that snlmarkov built (row
``p``: where a turn begun on ``p`` ends; state ``N`` absorbing). Only
PyDTMC's own work is timed: ``MarkovChain(p, states)`` (validation and set
up) and ``mean_absorption_times()`` (``inv(I - Q) @ 1`` over the transient
states, after PyDTMC finds them). Each size is run up to three times (fewer
when one run is long) and the fastest run counts.

Usage::

    benchmarks/.pydtmc-venv/bin/python benchmarks/pydtmc_baseline.py [--json] turn_100.npy turn_500.npy ...
"""

from __future__ import annotations

import json
import sys
import time

__all__ = ["expected_turns_pydtmc", "main"]


def expected_turns_pydtmc(p, *, repeat: int = 3, budget: float = 5.0) -> dict:
    """Time PyDTMC on the dense transition matrix ``p``; return its figures and the expected turns from state 0."""
    import numpy as np
    from pydtmc import MarkovChain

    states = [str(i) for i in range(p.shape[0])]
    best = None
    spent = 0.0
    for _ in range(repeat):
        t0 = time.perf_counter()
        mc = MarkovChain(p, states)
        t1 = time.perf_counter()
        mat = mc.mean_absorption_times()
        t2 = time.perf_counter()
        if mat is None:
            raise RuntimeError("PyDTMC does not see an absorbing chain")
        value = float(np.asarray(mat).ravel()[mc.transient_states.index("0")])
        run = {"construct_s": t1 - t0, "mat_s": t2 - t1, "value": value}
        if best is None or run["construct_s"] + run["mat_s"] < best["construct_s"] + best["mat_s"]:
            best = run
        spent += t2 - t0
        if spent > budget:
            break
    return best


def main(argv: list[str] | None = None) -> int:
    import numpy as np
    import pydtmc

    argv = sys.argv[1:] if argv is None else argv
    as_json = "--json" in argv
    out = []
    for path in (a for a in argv if a != "--json"):
        p = np.load(path)
        res = expected_turns_pydtmc(p)
        res.update(size=p.shape[0] - 1, pydtmc=pydtmc.__version__, numpy=np.__version__)
        out.append(res)
        if not as_json:
            print(
                f"{res['size']:>6} squares: MarkovChain {res['construct_s']:.3f} s, "
                f"mean_absorption_times {res['mat_s']:.3f} s, expected turns {res['value']:.9f}"
            )
    if as_json:
        print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The library limits BLAS to one thread inside its calls and gives the user's limits back."""

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

import snlmarkov as snl
from snlmarkov.chain.threads import one_blas_thread, single_blas_thread


def _blas_threads():
    return [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]


def test_limit_inside_and_restored_after():
    with threadpool_limits(limits=2, user_api="blas"):  # the user's own setting
        before = _blas_threads()
        with one_blas_thread():
            assert set(_blas_threads()) <= {1}
            with one_blas_thread():  # nested: still one, and leaving it keeps the outer limit
                pass
            assert set(_blas_threads()) <= {1}
        assert _blas_threads() == before


def test_library_calls_run_on_one_thread_and_leave_the_setting_alone():
    seen = []

    @single_blas_thread
    def probe():
        seen.append(_blas_threads())
        return np.linalg.solve(np.eye(4), np.ones(4))

    with threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        probe()
        a = snl.analyze(snl.Board.builtin())
        assert a.hit_probability.shape == (101,) and a.length.minimum > 0
        assert _blas_threads() == before
    assert all(set(s) <= {1} for s in seen)

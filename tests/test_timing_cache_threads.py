"""Timing cache shared by builds on two threads (a file of its own so that `make tsan` runs it under
ThreadSanitizer: it runs every tests/*thread*.py).  The helpers are tests/test_timing_cache.py's."""
import threading

import numpy as np

from test_timing_cache import NETS, build, fresh, run_plan


def test_two_threads_share_one_cache():
    cache = fresh()
    errors, plans = [], {}

    def work(name, rounds):
        try:
            for _ in range(rounds):
                plans.setdefault(name, []).append(build(NETS[name], cache)[0])
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(n, 3)) for n in ("conv", "onnx")]
    threads += [threading.Thread(target=lambda: [cache.serialize() for _ in range(50)])]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for name in ("conv", "onnx"):
        _, log, inputs, ref, _ = build(NETS[name], cache)
        assert log.timed() == 0
        # every build after the first read its timings from the cache: they agree with the warm one
        for p in plans[name][1:]:
            assert p == plans[name][1]
        feeds, outs = run_plan(plans[name][-1], inputs)
        np.testing.assert_allclose(outs["y"], ref(feeds["x"].astype(np.float64)), rtol=1e-4, atol=1e-4)
    assert fresh(bytes(cache.serialize())).num_entries == cache.num_entries

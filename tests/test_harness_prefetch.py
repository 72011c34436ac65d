"""harness/prefetch.py: the look-ahead keeps order, stays within its depth, and hands errors to the consumer; the
background writes keep order and stop the run at the first failed write."""
import threading
import time

import pytest

from hallubench.harness.prefetch import BackgroundWrites, prefetched


@pytest.mark.parametrize("workers", [1, 2, 3])
@pytest.mark.parametrize("depth", [1, 2, 5])
def test_prefetched_keeps_order_and_works_at_most_depth_items_ahead(depth, workers):
    started, consumed = [], []

    def work(item):
        started.append(item)
        time.sleep(0.005 * (item % 3))  # later items may finish first with several workers
        return item * 10

    for result in prefetched(range(8), work, depth=depth, workers=workers):
        time.sleep(0.01)  # the background thread runs ahead as far as it may
        assert len(started) - len(consumed) <= depth + 1  # the one handed over + at most `depth` waiting
        consumed.append(result)
    assert consumed == [i * 10 for i in range(8)]


def test_prefetched_overlaps_work_with_the_consumer():
    """4 items of 0.1 s work consumed with 0.1 s each: about 0.5 s overlapped, 0.8 s in sequence."""
    start = time.perf_counter()
    for _ in prefetched(range(4), lambda item: time.sleep(0.1), depth=2):
        time.sleep(0.1)
    assert time.perf_counter() - start < 0.7


def test_prefetched_raises_the_error_at_its_item_and_stops_the_rest():
    seen = []

    def work(item):
        if item == 2:
            raise ValueError("bad media in batch 2")
        return item

    with pytest.raises(ValueError, match="bad media in batch 2"):
        for result in prefetched(range(100), work, depth=2):
            seen.append(result)
    assert seen == [0, 1]


def test_leaving_early_cancels_what_has_not_started():
    started = []
    results = prefetched(range(100), lambda item: started.append(item) or time.sleep(0.02), depth=3)
    next(results)
    results.close()
    assert len(started) <= 5


def test_background_writes_run_in_order_off_the_calling_thread():
    written, threads = [], set()
    writes = BackgroundWrites()
    for i in range(20):
        writes.submit(lambda i=i: (written.append(i), threads.add(threading.get_ident())))
    writes.close()
    assert written == list(range(20)) and threading.get_ident() not in threads


def test_a_failed_write_stops_the_next_submit_and_keeps_the_earlier_ones():
    written = []
    writes = BackgroundWrites()
    writes.submit(lambda: written.append(1))

    def full_disk():
        raise OSError(28, "No space left on device")

    writes.submit(full_disk)
    with pytest.raises(OSError, match="No space left"):
        writes.submit(lambda: written.append(3))
        writes.close()
    assert written == [1]


def test_in_background_runs_beside_the_caller_and_hands_over_its_result_or_its_error():
    from hallubench.harness.prefetch import in_background

    started = time.perf_counter()
    sleepers = [in_background(lambda: time.sleep(0.2) or "done") for _ in range(3)]
    assert [future.result() for future in sleepers] == ["done"] * 3
    assert time.perf_counter() - started < 0.5  # side by side, not one after another

    def fails():
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        in_background(fails).result()

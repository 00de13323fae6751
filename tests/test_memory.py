"""The garbage-collector policy that keeps full collections out of key presses."""

from __future__ import annotations

import gc
import os
import platform
import subprocess
import sys
import time

import pytest

from mtcb_curate.tui import memory
from mtcb_curate.tui.memory import CollectorPolicy


def test_start_freezes_and_restore_puts_the_collector_back():
    before = gc.get_threshold()
    policy = CollectorPolicy()
    policy.start()
    try:
        assert policy.active and gc.get_freeze_count() > 0
        assert gc.get_threshold()[:2] == before[:2] and gc.get_threshold()[2] >= 10**9
    finally:
        policy.restore()
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0 and not policy.active


def test_tick_collects_only_when_idle_or_overdue(monkeypatch):
    policy = CollectorPolicy()
    assert policy.tick() is False  # not started
    policy.start()
    try:
        junk = [[i] for i in range(50_000)]  # enough allocations for young collections
        del junk
        gc.collect(1)  # a generation-1 collection is pending a full one
        policy.touch()
        assert gc.get_count()[2] > 0
        assert policy.tick() is False  # the user is typing
        monkeypatch.setattr(memory, "FORCE_AFTER", 1)
        assert policy.tick() is True  # overdue
        monkeypatch.setattr(memory, "FORCE_AFTER", 10**9)
        gc.collect(1)
        monkeypatch.setattr(memory, "IDLE_SECONDS", 0.0)
        time.sleep(0.01)
        assert policy.tick() is True and policy.full_collections == 2
        assert policy.tick() is False  # nothing pending since
    finally:
        policy.restore()


def test_refreeze_moves_new_objects_out_of_full_collections():
    policy = CollectorPolicy()
    policy.refreeze()  # not started: nothing happens
    assert gc.get_freeze_count() == 0
    policy.start()
    try:
        frozen = gc.get_freeze_count()
        keep = [[i] for i in range(10_000)]
        policy.refreeze()
        assert gc.get_freeze_count() >= frozen + len(keep)
    finally:
        policy.restore()


_ARENA_PROBE = r"""
import ctypes, ctypes.util, sys, tempfile, threading
from mtcb_curate.tui.memory import limit_heap_arenas
print(limit_heap_arenas(1) if sys.argv[1] == "limit" else None)
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.malloc.restype = ctypes.c_void_p; libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
def churn():  # ctypes calls release the GIL: the threads allocate at once
    for _ in range(20000):
        libc.free(libc.malloc(4096))
threads = [threading.Thread(target=churn) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
libc.fopen.restype = ctypes.c_void_p; libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]; libc.fclose.argtypes = [ctypes.c_void_p]
path = tempfile.mktemp()
fp = libc.fopen(path.encode(), b"w"); libc.malloc_info(0, fp); libc.fclose(fp)
print(open(path).read().count("<heap nr="))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc", reason="glibc only")
def test_limiting_heap_arenas_keeps_allocating_threads_in_one(monkeypatch):
    monkeypatch.delenv("MALLOC_ARENA_MAX", raising=False)

    def arenas(mode: str, **env) -> tuple[str, int]:
        out = subprocess.run([sys.executable, "-c", _ARENA_PROBE, mode], capture_output=True, text=True,
                             check=True, env={**os.environ, **env}).stdout.split()
        return out[0], int(out[1])

    assert arenas("none")[1] > 1  # glibc gives contending threads arenas of their own
    assert arenas("limit") == ("True", 1)
    # a MALLOC_ARENA_MAX the user set is theirs: not overridden
    assert arenas("limit", MALLOC_ARENA_MAX="4")[0] == "False"


def test_full_collections_are_off_from_mount_and_nothing_frozen_until_start():
    """``defer_full`` (as the app mounts): no automatic full collection, none from ``tick``,
    nothing frozen; ``start`` then freezes; ``restore`` puts everything back either way."""
    before = gc.get_threshold()
    policy = CollectorPolicy()
    policy.defer_full()
    try:
        assert gc.get_threshold()[:2] == before[:2] and gc.get_threshold()[2] >= 10**9
        assert not policy.active and gc.get_freeze_count() == 0
        gc.collect(1)
        assert policy.tick() is False and policy.full_collections == 0
        policy.refreeze()
        assert gc.get_freeze_count() == 0
        policy.start()
        assert policy.active and gc.get_freeze_count() > 0
    finally:
        policy.restore()
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0 and not policy.active
    policy.defer_full()
    policy.restore()  # never started: nothing was frozen, the thresholds come back
    assert gc.get_threshold() == before


def test_the_timer_runs_young_collections_between_keys(monkeypatch):
    monkeypatch.setattr(memory, "IDLE_SECONDS", 3600.0)  # no full collection in this test
    monkeypatch.setattr(memory, "FORCE_AFTER", 10**6)
    collected: list[int] = []

    def seen(phase, info):
        if phase == "start":
            collected.append(info["generation"])

    policy = CollectorPolicy()
    policy.start()
    gc.callbacks.append(seen)
    try:
        policy.touch()  # a key now: its frame may not be drawn yet
        for _ in range(memory.YOUNG_SKIPS):
            policy.tick()
        assert policy.young_collections == 0
        policy.tick()  # keys without a pause: not left forever
        assert policy.young_collections == 1 and collected[-1:] == [0]
        monkeypatch.setattr(memory, "KEY_QUIET_SECONDS", 0.0)
        monkeypatch.setattr(memory, "YOUNG_OLDER_EVERY", 1)
        policy.tick()
        assert collected[-1] == 1  # a generation-0 collection since the last of generation 1
        assert policy.young_collections == 2
        assert policy.full_collections == 0
    finally:
        gc.callbacks.remove(seen)
        policy.restore()

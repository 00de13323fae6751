"""The garbage-collector policy that keeps full collections out of key presses."""

from __future__ import annotations

import gc
import time

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


def test_no_full_collection_while_a_pass_holds(monkeypatch):
    policy = CollectorPolicy()
    policy.start()
    try:
        monkeypatch.setattr(memory, "FORCE_AFTER", 1)
        monkeypatch.setattr(memory, "IDLE_SECONDS", 0.0)
        with policy.holding():
            with policy.holding():  # a second pass at the same time
                junk = [[i] for i in range(50_000)]
                del junk
                gc.collect(1)
                assert gc.get_count()[2] > 0
                assert policy.tick() is False  # overdue and idle, but held
            assert policy.tick() is False  # the other pass still runs
        assert policy.full_collections == 0
        assert policy.tick() is True  # released: the usual policy again
    finally:
        policy.restore()

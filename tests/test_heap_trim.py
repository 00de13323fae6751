"""Handing the C heap's free pages back starts no child process: a child forked from the app or
the analysis worker holds the parent's resident set until it executes (``ctypes.util.find_library``
runs ``ldconfig`` so), and every process's resident set counts in the app's memory."""

from __future__ import annotations

import subprocess

import pytest


@pytest.fixture
def no_children(monkeypatch):
    started = []

    class Refused(subprocess.Popen):
        def __init__(self, args, *a, **k):
            started.append(args)
            raise OSError("no child process here")

    monkeypatch.setattr(subprocess, "Popen", Refused)
    return started


def test_the_worker_trims_its_heap_without_a_child_process(no_children):
    from mtcb_curate.app import analysis_worker

    analysis_worker._release()
    assert no_children == []


def test_the_app_finds_glibc_without_a_child_process(no_children, monkeypatch):
    from mtcb_curate import collector
    from mtcb_curate.tui import memory

    monkeypatch.setattr(collector, "_libc", None)  # the glibc handle tui.memory uses, looked up again
    assert memory.trim_heap() in (True, False)
    assert no_children == []

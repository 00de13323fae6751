"""``checks.findable.settings`` reads the ``[preview]`` table once per config file version
(path, mtime, size), not on every ``pair_problems`` call (every key in the app)."""

from __future__ import annotations

import os

from mtcb_curate.checks import findable
from mtcb_curate.preview import settings as psettings


def test_settings_read_once_per_config_file_version(tmp_path, monkeypatch):
    path = tmp_path / "c.toml"
    path.write_text("[preview]\nreference_size = 100\n", encoding="utf-8")
    monkeypatch.setenv("MTCB_CURATE_CONFIG", str(path))
    calls = []
    real = psettings.PreviewSettings.resolve.__func__

    def counting(cls, config=None):
        calls.append(config)
        return real(cls, config)

    monkeypatch.setattr(psettings.PreviewSettings, "resolve", classmethod(counting))
    findable.clear_settings_cache()
    assert findable.settings().reference_size == 100
    assert findable.settings().reference_size == 100
    assert len(calls) == 1
    path.write_text("[preview]\nreference_size = 300\n", encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    assert findable.settings().reference_size == 300
    assert len(calls) == 2
    other = tmp_path / "d.toml"
    monkeypatch.setenv("MTCB_CURATE_CONFIG", str(other))  # absent file: the defaults, cached too
    assert findable.settings().reference_size == psettings.REFERENCE_SIZE
    assert findable.settings().reference_size == psettings.REFERENCE_SIZE
    assert len(calls) == 3


def test_a_bad_config_gives_the_defaults(tmp_path, monkeypatch):
    path = tmp_path / "c.toml"
    path.write_text("[preview]\nreference_size = 'x'\n", encoding="utf-8")
    monkeypatch.setenv("MTCB_CURATE_CONFIG", str(path))
    findable.clear_settings_cache()
    assert findable.settings().reference_size == psettings.REFERENCE_SIZE

"""The numba cache never blocks import, and is never a folder someone else controls.

Each case runs in a subprocess that imports the package, plays a few steps of every
game and reports the warnings it saw: a cache directory that cannot be written (a
read-only or missing home, ``NUMBA_CACHE_DIR`` on a read-only place) falls back to a
private temporary directory, and a damaged cache entry (a truncated index, garbage in
an index or a data file) is discarded and compiled again, each with at most one
warning. The children get a copy of this process's compiled cache where they would
look for it, so they recompile only what was damaged.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from trafficenvs import numba_cache

_CHILD = r'''
import json, warnings
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    import trafficenvs
    for game in ("traffic_jam", "jamming_traffic", "jakarta_traffic"):
        env = trafficenvs.make(game, num_players=2)
        env.reset(seed=3)
        for i, agent in enumerate(env.agent_iter()):
            if i >= 12:
                break
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else env.action_space(agent).sample(obs["action_mask"]))
print(json.dumps([f"{w.category.__name__}: {w.message}" for w in caught]))
'''


def _unwritable(tmp_path: Path) -> Path:
    """A directory nobody can create or write: below a regular file (root ignores
    permission bits), else a read-only directory."""
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        blocker = tmp_path / "a-file"
        blocker.write_text("not a directory")
        return blocker / "home"
    ro = tmp_path / "read-only"
    ro.mkdir()
    ro.chmod(stat.S_IRUSR | stat.S_IXUSR)
    return ro


_FILLED: list[Path] = []


def _compiled_cache() -> Path:
    """This process's cache directory, filled by one child playing every game."""
    if not _FILLED:
        where = numba_cache.cache_dir()
        if where is None:
            pytest.skip("this process runs without a numba cache")
        _run({})
        _FILLED.append(where)
    return _FILLED[0]


def _run(env_updates: dict[str, str | None]) -> list[str]:
    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    for key, value in env_updates.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    proc = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True,
                          text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _seed_temp_fallback(tmp: Path) -> None:
    """Put a copy of the compiled cache where the temporary-directory fallback looks."""
    uid = os.getuid() if hasattr(os, "getuid") else 0
    base = tmp / f"trafficenvs-numba-{uid}"
    base.mkdir(mode=0o700)
    shutil.copytree(_compiled_cache(), base / f"numba-{numba_cache.source_hash()}")


def test_read_only_home_falls_back_to_a_temporary_cache(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    _seed_temp_fallback(tmp)
    caught = _run({"HOME": str(_unwritable(tmp_path)), "XDG_CACHE_HOME": None,
                   "NUMBA_CACHE_DIR": None, "TMPDIR": str(tmp)})
    assert len(caught) == 1, caught
    assert "CacheWarning" in caught[0] and str(tmp) in caught[0], caught


def test_read_only_numba_cache_dir_falls_back_to_a_temporary_cache(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    _seed_temp_fallback(tmp)
    caught = _run({"NUMBA_CACHE_DIR": str(_unwritable(tmp_path)), "TMPDIR": str(tmp)})
    assert len(caught) == 1, caught
    assert "cannot write numba's cache directory" in caught[0], caught


def _damage(cache: Path, pattern: str, how: str) -> Path:
    files = sorted(cache.rglob(pattern))
    assert files, f"no cache file {pattern} in {cache}"
    path = files[0]
    data = path.read_bytes()
    if how == "truncate":
        path.write_bytes(data[: len(data) // 2])
    elif how == "garbage":
        path.write_bytes(bytes((i * 97 + 13) % 256 for i in range(len(data))))
    else:  # garbage after a valid start (numba's version pickle), as a torn write leaves
        path.write_bytes(data[:40] + b"\x93\xff\x00garbage" * 20)
    return path


@pytest.mark.parametrize("pattern, how", [
    ("verbs.never_truncated-*.nbi", "truncate"),   # an index cut short (pickle truncated)
    ("driver.single_step-*.nbc", "garbage"),       # a data file overwritten
    ("driver.single_observe-*.nbi", "tail"),       # an index with a torn tail
    ("rules_*/*.nbc", "truncate"),                  # a game rule kernel's data file cut short
])
def test_damaged_cache_entry_is_discarded_and_rebuilt(tmp_path, pattern, how):
    cache = tmp_path / "cache"
    shutil.copytree(_compiled_cache(), cache)
    _damage(cache, pattern, how)
    caught = _run({"NUMBA_CACHE_DIR": str(cache)})
    assert len(caught) <= 1, caught
    assert all("CacheWarning" in w for w in caught), caught
    # rebuilt: the next process finds a sound cache and says nothing
    assert _run({"NUMBA_CACHE_DIR": str(cache)}) == []


_WHERE = r"""
import pathlib, sys, warnings
if sys.argv[1] == "no-home":
    # a user without a home: HOME unset (the caller's job) and no password entry, so
    # neither pathlib nor platformdirs can expand "~"
    import pwd

    def _no_entry(uid):
        raise KeyError(uid)
    pwd.getpwuid = _no_entry

    def _no_home(cls):
        raise RuntimeError("no home")
    pathlib.Path.home = classmethod(_no_home)
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    from trafficenvs import numba_cache
    where = numba_cache.cache_dir()
print(where)
print([str(w.message) for w in caught if "CacheWarning" in type(w.category).__name__ or
       "cache" in str(w.message)])
"""


def _where(env_updates: dict[str, str | None], mode: str = "home") -> tuple[str, str]:
    env = dict(os.environ)
    for key, value in env_updates.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    proc = subprocess.run([sys.executable, "-c", _WHERE, mode], env=env, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    where, warned = proc.stdout.strip().splitlines()[-2:]
    return where, warned


def _plant(folder: Path) -> None:
    """A folder another user owns and anyone can write, with a planted index in it."""
    folder.mkdir(parents=True)
    (folder / "driver.batch_step-1.py311.nbi").write_bytes(b"planted")
    os.chmod(folder, 0o777)
    os.chown(folder, 65534, 65534)


@pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                    reason="planting another user's folder needs root (chown)")
def test_a_cache_folder_another_user_owns_is_never_used(tmp_path):
    xdg = tmp_path / "xdg"
    _plant(xdg / "trafficenvs")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    where, warned = _where({"XDG_CACHE_HOME": str(xdg), "NUMBA_CACHE_DIR": None,
                            "TMPDIR": str(tmp)})
    assert not where.startswith(str(xdg)), where
    assert where.startswith(str(tmp / f"trafficenvs-numba-{os.getuid()}")), where
    assert "not private" in warned
    # without a home, the per-user temporary folder; planted by someone else: no cache
    other = tmp_path / "tmp2"
    other.mkdir()
    where, _ = _where({"XDG_CACHE_HOME": None, "NUMBA_CACHE_DIR": None, "HOME": None,
                       "TMPDIR": str(other)}, mode="no-home")
    assert where.startswith(str(other / f"trafficenvs-numba-{os.getuid()}")), where
    third = tmp_path / "tmp3"
    third.mkdir()
    _plant(third / f"trafficenvs-numba-{os.getuid()}")
    where, warned = _where({"XDG_CACHE_HOME": None, "NUMBA_CACHE_DIR": None, "HOME": None,
                            "TMPDIR": str(third)}, mode="no-home")
    assert where == "None" and "uncached" in warned


def test_an_own_cache_folder_open_to_others_is_closed(tmp_path):
    xdg = tmp_path / "xdg"
    (xdg / "trafficenvs").mkdir(parents=True)
    os.chmod(xdg / "trafficenvs", 0o777)
    where, warned = _where({"XDG_CACHE_HOME": str(xdg), "NUMBA_CACHE_DIR": None})
    assert where.startswith(str(xdg / "trafficenvs")), (where, warned)
    assert (xdg / "trafficenvs").stat().st_mode & 0o077 == 0
    assert Path(where).stat().st_mode & 0o077 == 0


def test_the_default_cache_folder_is_platformdirs_user_cache_dir(tmp_path, monkeypatch):
    """Without ``NUMBA_CACHE_DIR``, a usable (writable, private) default is the one
    platformdirs names for this user, with no warning: here a fresh home's."""
    from platformdirs import user_cache_dir

    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "XDG_CACHE_HOME": None, "NUMBA_CACHE_DIR": None}
    for key, value in env.items():
        if value is None:
            monkeypatch.delenv(key, raising=False)
        else:
            monkeypatch.setenv(key, value)
    base = Path(user_cache_dir("trafficenvs"))
    assert base.is_relative_to(home), base  # the home's, not another default
    assert numba_cache.user_cache_base() == base
    where, warned = _where(env)
    assert where == str(base / f"numba-{numba_cache.source_hash()}"), (where, warned)
    assert warned == "[]", warned
    assert Path(where).is_dir() and Path(where).stat().st_mode & 0o077 == 0

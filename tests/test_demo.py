"""The Python half of the main job (``./demo.sh python``) runs on a fresh process and leaves the
tables its steps describe, as other readers see them."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter

from tests.support import deltalake_cdf, read_deltalake


def test_python_demo_runs_and_leaves_what_it_says(tmp_path):
    done = subprocess.run([sys.executable, "-m", "sqlext.demo", "--dir", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    for step in ("DELETE and UPDATE", "MERGE", "change feed", "SQL on the same table", "History"):
        assert step in done.stdout, step

    events = tmp_path / "events"
    rows = {r["id"]: (r["value"], r["device"]) for r in read_deltalake(events).to_pylist()}
    assert rows == {1: (150.0, None), 3: (20.0, None), 5: (50.0, "web"), 6: (6.0, None),
                    7: (7.0, "mobile"), 8: (8.0, "tv")}
    changes = Counter((r["id"], r["_change_type"], r["_commit_version"])
                      for r in deltalake_cdf(events, 4, 6).to_pylist())
    assert changes == Counter({(2, "delete", 4): 1, (1, "update_preimage", 5): 1,
                               (1, "update_postimage", 5): 1, (5, "update_preimage", 6): 1,
                               (5, "update_postimage", 6): 1, (8, "insert", 6): 1})


def _remembering(seen: list):
    """A stand-in for a demo's steps: remembers its directory and writes a file there."""
    from pathlib import Path

    def run(base, *args, **kwargs):
        seen.append(Path(base))
        (Path(base) / "table").mkdir(parents=True)
        return {}
    return run


def test_demos_remove_their_temporary_directories(tmp_path, monkeypatch):
    """``python -m sqlext.demo`` and ``examples/run_example.py`` without a directory work in a
    temporary one and remove it; with ``--dir`` / ``--workdir`` they keep it."""
    import io
    import tempfile
    from pathlib import Path

    from sqlext import demo

    repo = Path(__file__).resolve().parents[1]
    sys.path.insert(0, str(repo / "examples"))
    try:
        import run_example
    finally:
        sys.path.remove(str(repo / "examples"))
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    seen: list = []
    monkeypatch.setattr(demo, "run", _remembering(seen))
    monkeypatch.setattr(run_example, "run", _remembering(seen))
    assert demo.main([]) == 0
    run_example.main([], out=io.StringIO())
    assert [p.parent for p in seen] == [scratch, scratch] and list(scratch.iterdir()) == []
    kept = tmp_path / "kept"
    demo.main(["--dir", str(kept / "demo")])
    run_example.main(["--workdir", str(kept / "example")], out=io.StringIO())
    assert (kept / "demo" / "table").is_dir() and (kept / "example" / "table").is_dir()

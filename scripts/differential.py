"""The long run of the random differential tester: sqlext against delta-spark 4.4.

    .venv/bin/python scripts/differential.py --seeds 50 --statements 20 [--first-seed 1000]

Each seed is a random table and ``--statements`` random statements
(``tests/support/differential.py``) run by sqlext in this process and by delta-spark in its
worker (``.venv-delta``), compared after every statement. Prints each disagreement with its seed
and statement, then a summary (sequences, statements compared, disagreements known and
unlisted, time). Exits 1 when any disagreement is not in ``KNOWN_DISAGREEMENTS``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO_ROOT))


def main(argv=None) -> int:
    """Run the seeds; the exit status (0: no unlisted disagreement)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=50, help="how many sequences")
    parser.add_argument("--statements", type=int, default=20, help="random statements per sequence")
    parser.add_argument("--first-seed", type=int, default=1000)
    parser.add_argument("--workdir", type=Path, default=None,
                        help="where the tables go (default: a temporary folder, removed after)")
    args = parser.parse_args(argv)

    from tests.support.deltaspark import DeltaSpark
    from tests.support.differential import make_sequence, run_both
    from tests.support.spark import build_session

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="sqlext-differential-") as tmp:
        work = args.workdir or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        spark = build_session(work / "warehouse", app_name="sqlext-differential")
        ds = DeltaSpark.start(conf={"spark.sql.warehouse.dir": str(work / "ds-warehouse")},
                              log_path=work / "delta-spark.log")
        compared = known = unlisted = harness = 0
        try:
            for seed in range(args.first_seed, args.first_seed + args.seeds):
                try:
                    verdict = run_both(spark, ds, make_sequence(seed, args.statements), work)
                except Exception as exc:  # noqa: BLE001 - the harness failed: say so, go on
                    print(f"seed {seed}: HARNESS FAILURE {type(exc).__name__}: {exc}"[:2000], flush=True)
                    harness += 1
                    continue
                compared += verdict.compared
                for disagreement in verdict.disagreements:
                    print(disagreement, flush=True)
                known += len(verdict.disagreements) - len(verdict.unlisted)
                unlisted += len(verdict.unlisted)
                print(f"seed {seed}: {verdict.compared} statements compared, "
                      f"{len(verdict.unlisted)} unlisted disagreements "
                      f"({time.monotonic() - started:.0f} s)", file=sys.stderr, flush=True)
        finally:
            ds.close()
            spark.stop()
    print(f"{args.seeds} sequences, {compared} statements compared, {known} known and "
          f"{unlisted} unlisted disagreements, {harness} harness failures, "
          f"{time.monotonic() - started:.0f} s")
    return 1 if unlisted or harness else 0


if __name__ == "__main__":
    sys.exit(main())

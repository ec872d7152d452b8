"""Properties of the deduplication modes over random histories (hypothesis, bounded examples).

A history is a sequence of table states over keys 0..4; each version reaches the next state
either by recording its changes in change files (as DELETE/UPDATE/MERGE do, sometimes "updating"
a row to the value it had) or by an overwrite whose changes are inferred from the files. For any
range s..e:

- ``none`` equals delta-rs's ``load_cdf``;
- ``dropCarryovers`` equals, per inferred version, the multiset difference of the two states
  (per recorded version, what was recorded);
- ``netChanges`` by value equals the multiset difference between the states before s and after e;
- ``netChanges`` by key (with computeUpdates) gives, for every key some version in the range
  changed, the row before the range and the row after it (pre/post image, delete or insert).
"""

from __future__ import annotations

from collections import Counter

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.change_feeds import HandTable, deltalake_change_rows, feeds

KEYS = range(5)
VALUES = st.sampled_from(["a", "b", "c"])
STATE = st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=5)


@st.composite
def histories(draw):
    steps = draw(st.lists(st.tuples(STATE, st.booleans(), st.sets(st.sampled_from(KEYS))),
                          min_size=1, max_size=4))
    start = draw(st.integers(1, len(steps) + 1))
    end = draw(st.integers(start, len(steps) + 1))
    return draw(STATE), steps, start, end


def rows(state: dict) -> Counter:
    return Counter((k, v) for k, v in state.items())


def diff(before: dict, after: dict, version: int | None = None) -> Counter:
    tag = () if version is None else (version,)
    out = Counter({r + ("delete",) + tag: n for r, n in (rows(before) - rows(after)).items()})
    out.update({r + ("insert",) + tag: n for r, n in (rows(after) - rows(before)).items()})
    return out


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(history=histories())
def test_modes_against_the_states(spark, tmp_path_factory, history):
    first, steps, start, end = history
    t = HandTable(tmp_path_factory.mktemp("prop") / "t", [("id", "integer"), ("v", "string")])
    t.append(sorted(first.items()))                                          # v1
    states = [{}, dict(first)]
    touched: list[set] = [set(), set(first)]
    recorded: list[Counter] = [Counter(), diff({}, first, 1)]
    for new, as_cdc, same in steps:
        old, v = states[-1], len(states)
        if as_cdc:   # record every change; keys in `same` that stay are "updated" to themselves
            changes = [((k, old[k]), "delete") for k in old if k not in new]
            changes += [((k, new[k]), "insert") for k in new if k not in old]
            hit = {k for k in old.keys() & new.keys() if old[k] != new[k] or k in same}
            for k in sorted(hit):
                changes += [((k, old[k]), "update_preimage"), ((k, new[k]), "update_postimage")]
            t.rewrite(sorted(new.items()), changes, "MERGE")
            recorded.append(Counter(r + (ct, v) for r, ct in changes))
            touched.append(hit | (old.keys() ^ new.keys()))
        else:
            t.overwrite(sorted(new.items()))
            recorded.append(diff(old, new, v))
            touched.append({k for k in old.keys() | new.keys() if old.get(k) != new.get(k)})
        states.append(dict(new))
    got = feeds(spark, t.path, {
        "none": dict(startingVersion=start, endingVersion=end),
        "drop": dict(startingVersion=start, endingVersion=end,
                     deduplicationMode="dropCarryovers"),
        "net": dict(startingVersion=start, endingVersion=end, deduplicationMode="netChanges"),
        "net_key": dict(startingVersion=start, endingVersion=end,
                        deduplicationMode="netChanges", identifierColumns=["id"],
                        computeUpdates=True)})
    assert got["none"] == deltalake_change_rows(t.path, start, end)
    assert got["drop"] == sum((recorded[v] for v in range(start, end + 1)), Counter())
    untagged = Counter({r[:-1]: n for r, n in got["net"].items()})
    assert untagged == diff(states[start - 1], states[end])
    before, after = states[start - 1], states[end]
    expected = Counter()
    for k in set().union(*touched[start:end + 1]):
        if k in before and k in after:
            expected[(k, before[k], "update_preimage")] += 1
            expected[(k, after[k], "update_postimage")] += 1
        elif k in before:
            expected[(k, before[k], "delete")] += 1
        elif k in after:
            expected[(k, after[k], "insert")] += 1
    assert Counter({r[:-1]: n for r, n in got["net_key"].items()}) == expected

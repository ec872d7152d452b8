"""The ON-condition analysis and source-key file pruning of MERGE, on synthetic log entries (no
Spark): which conjuncts are target-only, which are key equalities, and which files a set of
source keys can reach."""

from __future__ import annotations

import datetime as dt
import json

from sqlglot import exp

from sqlext.engine.merge.prune import (BUCKETS, KeyPair, KeyStats, SourceSummary, analyse_on,
                                       key_grid)
from sqlext.log.actions import AddFile, Metadata, Protocol
from sqlext.log.pruning import Pruner, parse_predicate
from sqlext.log.schema import Field, schema_string
from sqlext.log.snapshot import Snapshot

SCHEMA = [Field("id", "long"), Field("day", "date"), Field("name", "string"), Field("p", "integer")]


def snapshot(files: list[AddFile]) -> Snapshot:
    md = Metadata.new(schema_string(SCHEMA), ["p"], {}, 0)
    return Snapshot("/t", 0, Protocol(1, 2), md, {f.path: f for f in files})


def add(path: str, p: str | None, lo: int, hi: int, nulls: int = 0, records: int = 10) -> AddFile:
    stats = {"numRecords": records, "minValues": {"id": lo, "day": "2024-01-01", "name": "a"},
             "maxValues": {"id": hi, "day": "2024-01-31", "name": "z"},
             "nullCount": {"id": nulls, "day": 0, "name": 0}}
    return AddFile(path, {"p": p}, 1, 0, True, json.dumps(stats))


def test_on_conjuncts_split_into_target_only_and_keys():
    on = parse_predicate("t.id = s.id AND t.p = 1 AND s.name > 'a' AND s.day = t.day "
                         "AND t.name = upper(s.name) AND t.id < s.id")
    result = analyse_on(on, "t", "s", ["id", "day", "name", "p"], ["id", "day", "name"])
    assert result.target_only.sql(dialect="spark") == "t.p = 1"
    assert [(k.target, k.source.sql(dialect="spark")) for k in result.keys] == [
        ("id", "s.id"), ("day", "s.day"), ("name", "UPPER(s.name)")]


def test_unqualified_and_ambiguous_columns():
    on = parse_predicate("id = key AND p = 2 AND rand() > 0.5 AND t.p = rand()")
    result = analyse_on(on, None, None, ["id", "p"], ["key", "id"])
    # `id` is in both sides: unknown, so no key pair; `p` only in the target: target-only
    assert result.target_only.sql(dialect="spark") == "p = 2"
    assert result.keys == []


def test_source_keys_prune_files_by_range_and_grid():
    files = [add("a", "1", 0, 99), add("b", "1", 100, 199), add("c", "2", 200, 299),
             add("d", "2", 300, 399, nulls=10), add("e", None, 400, 499), add("f", "1", 5, 5)]
    snap = snapshot(files)
    pair = KeyPair("id", exp.column("id", "s"), "int")
    grid = key_grid(snap, files, pair)
    assert (grid.low, grid.high) == (0, 499) and BUCKETS * grid.width >= 500
    # source keys 150 and 151 (one bucket), 1000 (above every file): one file can match
    summary = SourceSummary(3, [KeyStats(pair, 150, 1000, grid, [(150, 151), (1000, 1000)])])
    assert [f.path for f in summary.prune(snap, files)] == ["b"]
    # keys at the edge of a file: 99 (in "a") and 100 (in "b") share a bucket, not "a" or "b"'s
    # neighbours; an interval ending at 99 does not reach "b"
    edge = SourceSummary(2, [KeyStats(pair, 90, 99, grid, [(90, 99)])])
    assert [f.path for f in edge.prune(snap, files)] == ["a"]
    # the partition column as key: NULL partitions never match, others by their value
    ppair = KeyPair("p", exp.column("p", "s"), "int")
    psummary = SourceSummary(3, [KeyStats(ppair, 2, 2, None, None)])
    assert [f.path for f in psummary.prune(snap, files)] == ["c", "d"]


def test_source_without_keys_matches_nothing_and_reads_nothing():
    files = [add("a", "1", 0, 99)]
    pair = KeyPair("id", exp.column("id", "s"), "int")
    summary = SourceSummary(2, [KeyStats(pair, None, None, None, [])])
    assert summary.prune(snapshot(files), files) == []
    assert summary.read_predicate() == exp.false()


def test_read_predicate_bounds_the_region_a_concurrent_writer_conflicts_in():
    files = [add("a", "1", 0, 99), add("b", "1", 100, 199)]
    pair = KeyPair("day", exp.column("day", "s"), "date")
    low = (dt.date(2024, 1, 5) - dt.date(1970, 1, 1)).days
    summary = SourceSummary(1, [KeyStats(pair, low, low + 1, None, None)])
    predicate = summary.read_predicate()
    assert predicate.sql(dialect="spark") == "`day` >= '2024-01-05' AND `day` <= '2024-01-06'"
    outside = AddFile("x", {"p": "1"}, 1, 0, True, json.dumps({
        "numRecords": 1, "minValues": {"day": "2024-02-01"}, "maxValues": {"day": "2024-02-02"},
        "nullCount": {"day": 0}}))
    pruner = Pruner(predicate, SCHEMA, ["p"])
    assert not pruner.might_match(outside) and pruner.might_match(files[0])


def test_null_safe_keys_prune_unless_the_source_has_a_null_key():
    # dbt's merge and delete+insert join on `<=>`: a key pair like `=`, except that a NULL
    # source key matches the target's NULLs (in any file, the NULL partition too)
    on = parse_predicate("s.id <=> t.id AND t.p = s.p")
    result = analyse_on(on, "t", "s", ["id", "day", "name", "p"], ["id", "p"])
    assert [(k.target, k.null_safe) for k in result.keys] == [("id", True), ("p", False)]
    files = [add("a", "1", 0, 99), add("b", "1", 100, 199, nulls=3), add("e", None, 400, 499)]
    snap = snapshot(files)
    pair = KeyPair("id", exp.column("id", "s"), "int", null_safe=True)
    no_null = SourceSummary(2, [KeyStats(pair, 150, 160)])
    assert [f.path for f in no_null.prune(snap, files)] == ["b"]
    assert no_null.read_predicate() is not None
    with_null = SourceSummary(3, [KeyStats(pair, 150, 160, has_null=True)])
    assert [f.path for f in with_null.prune(snap, files)] == ["a", "b", "e"]
    assert with_null.read_predicate() is None
    # only NULL keys: nothing to bound by, every file stays
    only_null = SourceSummary(1, [KeyStats(pair, None, None, has_null=True)])
    assert [f.path for f in only_null.prune(snap, files)] == ["a", "b", "e"]
    # the partition key null-safe with a NULL in the source: the NULL partition can match
    ppair = KeyPair("p", exp.column("p", "s"), "int", null_safe=True)
    assert [f.path for f in SourceSummary(1, [KeyStats(ppair, 2, 2, has_null=True)]).prune(
        snap, files)] == ["a", "b", "e"]
    assert [f.path for f in SourceSummary(1, [KeyStats(ppair, 1, 1)]).prune(snap, files)] == [
        "a", "b"]

"""Deletion vectors in the kernel (no Spark): descriptors, Z85, the RoaringBitmapArray decoder,
deletion vector files, log replay keyed by (path, DV id), and checkpoints keeping descriptors."""

from __future__ import annotations

import json
import struct

import pytest
from pyroaring import BitMap

from sqlext.errors import CorruptLogError, DeletionVectorError
from sqlext.log.actions import AddFile, Metadata, Protocol, RemoveFile, action_to_json_obj
from sqlext.log.checkpoint import checkpoint_bytes, read_checkpoint
from sqlext.log.deletion_vectors import (PORTABLE_MAGIC, DeletionVectorDescriptor,
                                         RoaringBitmapArray, deletion_vector_file,
                                         load_deletion_vector,
                                         stored_bitmap_bytes, unique_id, z85_decode, z85_encode)
from sqlext.log.snapshot import Replayer, tombstone_key
from tests.support.fixtures import fixture_path

FIXTURE_DV = {"storageType": "u", "pathOrInlineDv": "vBn[lx{q8@P<9BNH/isA", "offset": 1,
              "sizeInBytes": 36, "cardinality": 2}


def _serialize(rows: list[int], optimize: bool = True) -> bytes:
    """A portable RoaringBitmapArray of ``rows`` laid out here with pyroaring directly (the
    decoder is checked against it, not against sqlext's own serializer)."""
    buckets: dict[int, BitMap] = {}
    for r in rows:
        buckets.setdefault(r >> 32, BitMap()).add(r & 0xFFFFFFFF)
    out = struct.pack("<iq", PORTABLE_MAGIC, len(buckets))
    for key in sorted(buckets):
        bitmap = buckets[key]
        if optimize:
            bitmap.run_optimize()
        out += struct.pack("<I", key) + bitmap.serialize()
    return out


def _dv_file(*bitmaps: bytes) -> tuple[bytes, list[int]]:
    return deletion_vector_file(list(bitmaps))


def test_serializer_round_trips():
    rows = [0, 5, 70_000, (2 << 32) + 3] + list(range(1000, 9000))
    data = RoaringBitmapArray.from_rows(rows).serialize()
    assert RoaringBitmapArray.deserialize(data).row_indexes() == sorted(rows)
    assert data == _serialize(rows)


def test_z85_matches_the_spec_example_and_round_trips():
    assert z85_decode("HelloWorld") == bytes([0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B])
    data = bytes(range(256)) * 2
    assert z85_decode(z85_encode(data)) == data
    with pytest.raises(ValueError):
        z85_decode("abc")


def test_relative_descriptor_names_the_file_under_an_optional_prefix():
    d = DeletionVectorDescriptor.from_dict(FIXTURE_DV)
    assert d.relative_path() == "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin"
    prefixed = DeletionVectorDescriptor.from_dict({**FIXTURE_DV, "pathOrInlineDv": "ab" + FIXTURE_DV["pathOrInlineDv"]})
    assert prefixed.relative_path() == "ab/deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin"
    assert d.to_dict() == FIXTURE_DV
    with pytest.raises(DeletionVectorError):
        DeletionVectorDescriptor.from_dict({**FIXTURE_DV, "pathOrInlineDv": "short"}).relative_path()
    with pytest.raises(DeletionVectorError):
        DeletionVectorDescriptor.from_dict({**FIXTURE_DV, "storageType": "x"})


def test_unique_id_is_storage_type_path_and_offset():
    assert unique_id(FIXTURE_DV) == "uvBn[lx{q8@P<9BNH/isA@1"
    inline = {"storageType": "i", "pathOrInlineDv": "abcde", "sizeInBytes": 4, "cardinality": 1}
    assert unique_id(inline) == "iabcde"
    assert unique_id(None) is None
    assert DeletionVectorDescriptor.from_dict(inline).unique_id == "iabcde"


@pytest.mark.parametrize("rows", [
    [0],
    [0, 9],
    list(range(0, 200_000, 3)),                       # array and bitmap containers, >4 of them
    list(range(10, 70_000)) + [1 << 20],              # run containers (run_optimize)
    [5, (1 << 32) + 7, (3 << 32) + 1, (3 << 32) + 65_536 * 5],   # several 64-bit buckets
])
def test_bitmap_array_decodes_every_bucket(rows):
    bitmap = RoaringBitmapArray.deserialize(_serialize(rows))
    assert bitmap.row_indexes() == sorted(rows)
    assert len(bitmap) == len(rows)
    # without run containers too: each bucket's length is found from its own header
    assert RoaringBitmapArray.deserialize(_serialize(rows, optimize=False)).row_indexes() == sorted(rows)


def test_bitmap_array_refuses_bad_magic_and_truncation():
    good = _serialize([1, 2, 3, 100_000])
    with pytest.raises(DeletionVectorError, match="magic"):
        RoaringBitmapArray.deserialize(struct.pack("<i", 42) + good[4:])
    with pytest.raises(DeletionVectorError, match="native"):
        RoaringBitmapArray.deserialize(struct.pack("<i", PORTABLE_MAGIC - 1) + good[4:])
    with pytest.raises(DeletionVectorError):
        RoaringBitmapArray.deserialize(good[:-3])
    assert issubclass(DeletionVectorError, CorruptLogError)


def test_file_with_several_bitmaps_reads_each_at_its_offset_and_checks_crc():
    first, second = _serialize([1, 4]), _serialize(list(range(100, 5000)))
    data, offsets = _dv_file(first, second)
    assert stored_bitmap_bytes(data, offsets[1], len(second), "f") == second
    d = DeletionVectorDescriptor("p", "file:/x/dv.bin", len(second), 4900, offsets[1])
    assert load_deletion_vector(d, lambda path: data).row_indexes() == list(range(100, 5000))
    corrupt = bytearray(data)
    corrupt[offsets[1] + 10] ^= 0xFF
    with pytest.raises(DeletionVectorError, match="checksum"):
        load_deletion_vector(d, lambda path: bytes(corrupt))
    with pytest.raises(DeletionVectorError, match="log says"):
        load_deletion_vector(DeletionVectorDescriptor("p", "x", len(first) + 1, 2, offsets[0]),
                             lambda path: data)
    with pytest.raises(DeletionVectorError, match="rows marked"):
        load_deletion_vector(DeletionVectorDescriptor("p", "x", len(first), 3, offsets[0]),
                             lambda path: data)
    with pytest.raises(DeletionVectorError, match="cannot be read"):
        load_deletion_vector(d, lambda path: open("/nonexistent/dv.bin", "rb").read())


def test_inline_descriptor_holds_the_bitmap():
    raw = _serialize([3, 7, 8])
    padded = raw + b"\0" * (-len(raw) % 4)
    d = DeletionVectorDescriptor.from_dict({"storageType": "i", "pathOrInlineDv": z85_encode(padded),
                                            "sizeInBytes": len(raw), "cardinality": 3})
    assert load_deletion_vector(d, None).row_indexes() == [3, 7, 8]


def test_the_databricks_fixture_file_decodes():
    root = fixture_path("table-with-dv-small")
    d = DeletionVectorDescriptor.from_dict(FIXTURE_DV)
    bitmap = load_deletion_vector(d, lambda rel: (root / rel).read_bytes())
    assert bitmap.row_indexes() == [0, 9]


def _add(path, dv=None, records=10):
    return AddFile(path, {}, 100, 1, True, json.dumps({"numRecords": records}), None, dv)


def _remove(path, dv=None):
    return RemoveFile(path, 2, True, True, {}, 100, None, None, dv)


def _dv(tag: str, cardinality: int = 1) -> dict:
    return {"storageType": "u", "pathOrInlineDv": tag * 20, "offset": 1, "sizeInBytes": 34,
            "cardinality": cardinality}


@pytest.mark.parametrize("add_first", [True, False])
def test_replay_keys_files_by_path_and_deletion_vector(add_first):
    r = Replayer()
    r.apply([Protocol(3, 7, ["deletionVectors"], ["deletionVectors"]), Metadata.new("{}", [], {}, 0),
             _add("a.parquet"), _add("b.parquet")])
    swap = [_remove("a.parquet"), _add("a.parquet", _dv("x", 2))]
    r.apply(swap[::-1] if add_first else swap)
    again = [_remove("a.parquet", _dv("x", 2)), _add("a.parquet", _dv("y", 3))]
    r.apply(again[::-1] if add_first else again)
    snap = r.snapshot("t", 2, None)
    assert snap.files_by_path["a.parquet"].deletion_vector == _dv("y", 3)
    assert snap.num_records == 7 + 10
    assert set(snap.tombstones) == {"a.parquet", tombstone_key("a.parquet", _dv("x", 2))}
    r.apply([_remove("a.parquet", _dv("y", 3))])
    assert set(r.files) == {"b.parquet"}


def test_a_remove_of_another_deletion_vector_leaves_the_live_file():
    r = Replayer()
    r.apply([_add("a.parquet", _dv("y"))])
    r.apply([_remove("a.parquet", _dv("x"))])
    assert set(r.files) == {"a.parquet"}


def test_checkpoint_keeps_descriptors_byte_for_byte():
    inline = {"storageType": "i", "pathOrInlineDv": "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L",
              "sizeInBytes": 40, "cardinality": 6, "maxRowIndex": 9}
    adds = [_add("a.parquet", FIXTURE_DV), _add("b.parquet", inline), _add("c.parquet")]
    removes = [_remove("a.parquet", inline), _remove("d.parquet")]
    data, _, _ = checkpoint_bytes(Protocol(3, 7, ["deletionVectors"], ["deletionVectors"]),
                                  Metadata.new("{}", [], {}, 0), adds, removes, [])
    back = [a for a in read_checkpoint([data]) if isinstance(a, (AddFile, RemoveFile))]
    dump = lambda a: json.dumps(action_to_json_obj(a)["add" if isinstance(a, AddFile) else "remove"]["deletionVector"] if a.deletion_vector else None)  # noqa: E731
    assert [dump(a) for a in back] == [dump(a) for a in adds + removes]
    assert [a.deletion_vector for a in back] == [FIXTURE_DV, inline, None, inline, None]

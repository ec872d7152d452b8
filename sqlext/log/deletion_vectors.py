"""Deletion vectors: the descriptors on ``add``/``remove`` actions and the bitmaps they point to.

A deletion vector (PROTOCOL.md, "Deletion Vectors") marks rows of one data file as deleted, by
their position in the file (the parquet row index). The ``deletionVector`` field of an action is
a descriptor:

- ``storageType`` ``i``: the bitmap is inline, Z85-encoded in ``pathOrInlineDv``;
- ``u``: in a file under the table, ``pathOrInlineDv`` being an optional random prefix followed
  by the Z85-encoded 16-byte UUID (20 characters) of ``<prefix>/deletion_vector_<uuid>.bin``;
- ``p``: in a file at the absolute path ``pathOrInlineDv``;

with ``offset`` (where the bitmap starts in the file), ``sizeInBytes``, ``cardinality`` (rows
deleted) and optionally ``maxRowIndex``. A deletion vector file holds a version byte (1), then
at each ``offset`` a big-endian int32 size, that many bytes of bitmap, and a big-endian CRC-32
of those bytes. The bitmap is a ``RoaringBitmapArray``: a little-endian int32 magic
(1681511377 for the portable layout) then the 64-bit "portable" roaring layout: an int64 count
of buckets, each a little-endian uint32 key (the high 32 bits of the row indexes) followed by a
standard portable 32-bit roaring bitmap of the low 32 bits, decoded here with ``pyroaring``.
"""

from __future__ import annotations

import base64
import struct
import uuid
import zlib
from dataclasses import dataclass

from pyroaring import BitMap

from sqlext.errors import DeletionVectorError

PORTABLE_MAGIC = 1681511377
NATIVE_MAGIC = 1681511376
_UUID_CHARS = 20

_Z85 = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"
_B85 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"
_Z85_TO_B85 = str.maketrans(_Z85, _B85)
_B85_TO_Z85 = str.maketrans(_B85, _Z85)

# portable roaring layout (RoaringFormatSpec)
_COOKIE_NO_RUNS = 12346
_COOKIE_RUNS = 12347
_NO_OFFSET_THRESHOLD = 4
_ARRAY_MAX = 4096


def z85_decode(text: str) -> bytes:
    """The bytes of a Z85 string (its length a multiple of 5)."""
    if len(text) % 5:
        raise ValueError(f"a Z85 string has a multiple of 5 characters, not {len(text)}")
    return base64.b85decode(text.translate(_Z85_TO_B85))


def z85_encode(data: bytes) -> str:
    """The Z85 text of ``data`` (its length a multiple of 4)."""
    if len(data) % 4:
        raise ValueError(f"Z85 encodes a multiple of 4 bytes, not {len(data)}")
    return base64.b85encode(data).decode("ascii").translate(_B85_TO_Z85)


@dataclass(frozen=True)
class DeletionVectorDescriptor:
    """The ``deletionVector`` of an ``add`` or ``remove`` action."""

    storage_type: str
    path_or_inline_dv: str
    size_in_bytes: int
    cardinality: int
    offset: int | None = None
    max_row_index: int | None = None

    @classmethod
    def from_dict(cls, d: dict) -> "DeletionVectorDescriptor":
        """Parse the action's ``deletionVector`` JSON object."""
        try:
            storage_type = d["storageType"]
            if storage_type not in ("i", "u", "p"):
                raise ValueError(f"unknown storageType {storage_type!r}")
            offset = d.get("offset")
            max_row = d.get("maxRowIndex")
            return cls(storage_type, str(d["pathOrInlineDv"]), int(d["sizeInBytes"]),
                       int(d["cardinality"]), None if offset is None else int(offset),
                       None if max_row is None else int(max_row))
        except (KeyError, TypeError, ValueError) as exc:
            raise DeletionVectorError(f"invalid deletion vector descriptor {d!r}: {exc}") from exc

    def to_dict(self) -> dict:
        """The descriptor as the action's ``deletionVector`` JSON object."""
        d: dict = {"storageType": self.storage_type, "pathOrInlineDv": self.path_or_inline_dv}
        if self.offset is not None:
            d["offset"] = self.offset
        d["sizeInBytes"] = self.size_in_bytes
        d["cardinality"] = self.cardinality
        if self.max_row_index is not None:
            d["maxRowIndex"] = self.max_row_index
        return d

    @property
    def unique_id(self) -> str:
        """``storageType + pathOrInlineDv`` (``+ '@' + offset``): with the file's path, what
        identifies a logical file in log replay."""
        return unique_id(self.to_dict())

    def relative_path(self) -> str | None:
        """For ``u``: the file's path relative to the table (``<prefix>/deletion_vector_<uuid>.bin``)."""
        if self.storage_type != "u":
            return None
        text = self.path_or_inline_dv
        if len(text) < _UUID_CHARS:
            raise DeletionVectorError(f"deletion vector path {text!r}: fewer than 20 characters")
        prefix, encoded = text[:-_UUID_CHARS], text[-_UUID_CHARS:]
        try:
            dv_uuid = uuid.UUID(bytes=z85_decode(encoded))
        except ValueError as exc:
            raise DeletionVectorError(f"deletion vector path {text!r}: bad UUID ({exc})") from exc
        name = f"deletion_vector_{dv_uuid}.bin"
        return f"{prefix}/{name}" if prefix else name

    def inline_bytes(self) -> bytes:
        """For ``i``: the serialized bitmap held in the descriptor."""
        try:
            data = z85_decode(self.path_or_inline_dv)
        except ValueError as exc:
            raise DeletionVectorError(f"inline deletion vector: not Z85 ({exc})") from exc
        return data[:self.size_in_bytes]


def unique_id(deletion_vector: dict | None) -> str | None:
    """The unique id of a ``deletionVector`` JSON object (None for a file without one)."""
    if not deletion_vector:
        return None
    out = f"{deletion_vector.get('storageType')}{deletion_vector.get('pathOrInlineDv')}"
    offset = deletion_vector.get("offset")
    return out if offset is None else f"{out}@{offset}"


def _portable_size(data: bytes | memoryview, start: int) -> int:
    """The length of the portable 32-bit roaring bitmap serialized at ``data[start:]``."""
    pos = start
    (cookie,) = struct.unpack_from("<I", data, pos)
    pos += 4
    if cookie & 0xFFFF == _COOKIE_RUNS:
        n = (cookie >> 16) + 1
        run_flags = bytes(data[pos:pos + (n + 7) // 8])
        pos += (n + 7) // 8
    elif cookie == _COOKIE_NO_RUNS:
        (n,) = struct.unpack_from("<I", data, pos)
        pos += 4
        run_flags = None
    else:
        raise ValueError(f"not a portable roaring bitmap (cookie {cookie})")
    cards = [struct.unpack_from("<H", data, pos + 4 * i + 2)[0] + 1 for i in range(n)]
    pos += 4 * n
    if run_flags is None or n >= _NO_OFFSET_THRESHOLD:
        pos += 4 * n
    for i, card in enumerate(cards):
        if run_flags is not None and run_flags[i // 8] & (1 << (i % 8)):
            (runs,) = struct.unpack_from("<H", data, pos)
            pos += 2 + 4 * runs
        elif card > _ARRAY_MAX:
            pos += 8192
        else:
            pos += 2 * card
    if pos > len(data):
        raise ValueError("roaring bitmap truncated")
    return pos - start


@dataclass(frozen=True)
class RoaringBitmapArray:
    """A set of 64-bit row indexes: 32-bit roaring bitmaps keyed by the high 32 bits."""

    buckets: tuple[tuple[int, BitMap], ...]

    @classmethod
    def from_rows(cls, rows) -> "RoaringBitmapArray":
        """The set of the given row indexes."""
        buckets: dict[int, BitMap] = {}
        for r in rows:
            buckets.setdefault(r >> 32, BitMap()).add(r & 0xFFFFFFFF)
        return cls(tuple(sorted(buckets.items(), key=lambda kb: kb[0])))

    def serialize(self) -> bytes:
        """The portable ``RoaringBitmapArray`` layout (magic included), as Delta writers store
        it; run containers where they are smaller."""
        out = [struct.pack("<iq", PORTABLE_MAGIC, len(self.buckets))]
        for key, bitmap in sorted(self.buckets, key=lambda kb: kb[0]):
            bitmap = BitMap(bitmap)
            bitmap.run_optimize()
            out.append(struct.pack("<I", key) + bitmap.serialize())
        return b"".join(out)

    @classmethod
    def deserialize(cls, data: bytes) -> "RoaringBitmapArray":
        """Decode a serialized ``RoaringBitmapArray`` (magic included)."""
        if len(data) < 12:
            raise DeletionVectorError(f"deletion vector of {len(data)} bytes: too short")
        (magic,) = struct.unpack_from("<i", data, 0)
        if magic == NATIVE_MAGIC:
            raise DeletionVectorError("deletion vector in the native RoaringBitmapArray layout, "
                                      "which Delta writers do not produce; sqlext reads the "
                                      "portable layout")
        if magic != PORTABLE_MAGIC:
            raise DeletionVectorError(f"deletion vector: bad magic number {magic}")
        (count,) = struct.unpack_from("<q", data, 4)
        pos = 12
        view = memoryview(data)
        buckets = []
        try:
            for _ in range(count):
                (key,) = struct.unpack_from("<I", data, pos)
                pos += 4
                size = _portable_size(data, pos)
                buckets.append((key, BitMap.deserialize(bytes(view[pos:pos + size]))))
                pos += size
        except (struct.error, ValueError) as exc:
            raise DeletionVectorError(f"deletion vector: corrupt bitmap ({exc})") from exc
        return cls(tuple(buckets))

    def difference(self, other: "RoaringBitmapArray | None") -> "RoaringBitmapArray":
        """The row indexes in this set and not in ``other``."""
        if other is None:
            return self
        others = dict(other.buckets)
        return RoaringBitmapArray(tuple((key, bitmap - others[key] if key in others else bitmap)
                                        for key, bitmap in self.buckets))

    def union(self, other: "RoaringBitmapArray | None") -> "RoaringBitmapArray":
        """The row indexes in this set or in ``other``."""
        if other is None:
            return self
        merged = {key: BitMap(bitmap) for key, bitmap in self.buckets}
        for key, bitmap in other.buckets:
            merged[key] = merged[key] | bitmap if key in merged else BitMap(bitmap)
        return RoaringBitmapArray(tuple(sorted(merged.items(), key=lambda kb: kb[0])))

    @classmethod
    def from_array(cls, rows) -> "RoaringBitmapArray":
        """The set of the row indexes of a numpy integer array (bulk :meth:`from_rows`)."""
        import numpy as np

        rows = np.asarray(rows, dtype=np.int64)
        highs = rows >> 32
        buckets = []
        for key in np.unique(highs).tolist():
            low = (rows[highs == key] & 0xFFFFFFFF).astype(np.uint32)
            buckets.append((int(key), BitMap(low.tolist())))
        return cls(tuple(buckets))

    def __len__(self) -> int:
        return sum(len(b) for _, b in self.buckets)

    def row_indexes(self) -> list[int]:
        """The deleted row indexes, ascending."""
        out: list[int] = []
        for key, bitmap in sorted(self.buckets, key=lambda kb: kb[0]):
            high = key << 32
            out.extend(bitmap if not high else (high | v for v in bitmap))
        return out

    def bucket_arrays(self):
        """``(high << 32, array of low 32-bit values)`` per bucket, for bulk conversion."""
        return [(key << 32, bitmap.to_array()) for key, bitmap in sorted(self.buckets,
                                                                        key=lambda kb: kb[0])]

    def row_index_array(self):
        """The deleted row indexes, ascending, as one numpy ``int64`` array (bulk conversion of
        :meth:`bucket_arrays`)."""
        import numpy as np

        parts = [np.frombuffer(low, dtype=np.uint32).astype(np.int64) + high
                 for high, low in self.bucket_arrays()]
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)


def deletion_vector_file(bitmaps: list[bytes]) -> tuple[bytes, list[int]]:
    """The bytes of a deletion vector file holding the serialized ``bitmaps``, and the
    ``offset`` of each."""
    data, offsets = bytearray(b"\x01"), []
    for b in bitmaps:
        offsets.append(len(data))
        data += struct.pack(">i", len(b)) + b + struct.pack(">I", zlib.crc32(b))
    return bytes(data), offsets


def new_deletion_vector_file(bitmaps: list[RoaringBitmapArray]
                             ) -> tuple[str, bytes, list[DeletionVectorDescriptor]]:
    """A new deletion vector file holding ``bitmaps``, as delta-spark writes one per commit: its
    path relative to the table (``deletion_vector_<uuid>.bin`` at the root), its bytes, and the
    ``u`` descriptor of each bitmap (``offset``, ``sizeInBytes``, ``cardinality``)."""
    file_uuid = uuid.uuid4()
    serialized = [b.serialize() for b in bitmaps]
    data, offsets = deletion_vector_file(serialized)
    encoded = z85_encode(file_uuid.bytes)
    descriptors = [DeletionVectorDescriptor("u", encoded, len(ser), len(b), offset)
                   for b, ser, offset in zip(bitmaps, serialized, offsets)]
    return f"deletion_vector_{file_uuid}.bin", data, descriptors


def stored_bitmap_bytes(file_bytes: bytes, offset: int | None, size_in_bytes: int,
                        where: str) -> bytes:
    """The serialized bitmap at ``offset`` of a deletion vector file's bytes, checksum verified."""
    if not file_bytes or file_bytes[0] != 1:
        version = file_bytes[0] if file_bytes else None
        raise DeletionVectorError(f"deletion vector file {where}: unknown format version {version}")
    pos = 1 if offset is None else offset
    if pos + 4 > len(file_bytes):
        raise DeletionVectorError(f"deletion vector file {where}: offset {pos} past its end")
    (size,) = struct.unpack_from(">i", file_bytes, pos)
    if size != size_in_bytes:
        raise DeletionVectorError(f"deletion vector file {where} at offset {pos}: {size} bytes "
                                  f"stored, the log says {size_in_bytes}")
    data = file_bytes[pos + 4:pos + 4 + size]
    if len(data) != size or pos + 8 + size > len(file_bytes):
        raise DeletionVectorError(f"deletion vector file {where}: truncated at offset {pos}")
    (crc,) = struct.unpack_from(">I", file_bytes, pos + 4 + size)
    if zlib.crc32(data) != crc:
        raise DeletionVectorError(f"deletion vector file {where} at offset {pos}: checksum "
                                  "mismatch (the file is corrupt)")
    return data


def load_deletion_vector(descriptor: DeletionVectorDescriptor, read_file) -> RoaringBitmapArray:
    """The bitmap a descriptor names. ``read_file(path)`` returns a file's bytes; ``path`` is
    relative to the table for ``u`` descriptors, absolute for ``p`` ones."""
    if descriptor.storage_type == "i":
        bitmap = RoaringBitmapArray.deserialize(descriptor.inline_bytes())
    else:
        path = (descriptor.relative_path() if descriptor.storage_type == "u"
                else descriptor.path_or_inline_dv)
        try:
            data = read_file(path)
        except (OSError, FileNotFoundError) as exc:
            raise DeletionVectorError(f"deletion vector file {path} cannot be read ({exc}); it "
                                      "was removed (VACUUM) or lost") from exc
        bitmap = RoaringBitmapArray.deserialize(
            stored_bitmap_bytes(data, descriptor.offset, descriptor.size_in_bytes, path))
    if len(bitmap) != descriptor.cardinality:
        raise DeletionVectorError(f"deletion vector {descriptor.unique_id}: {len(bitmap)} rows "
                                  f"marked, the log says {descriptor.cardinality}")
    return bitmap


class DeletionVectorReader:
    """Loads the deletion vectors of one table's files, reading each deletion vector file once
    (one file usually holds the bitmaps of many data files). ``read_file(path)`` returns the
    bytes of a file named as a descriptor names it (relative to the table for ``u``
    descriptors, absolute for ``p`` ones); :meth:`of` builds it for a table's log."""

    def __init__(self, read_file):
        self._read_file = read_file
        self._contents: dict[str, bytes] = {}

    @classmethod
    def of(cls, log) -> "DeletionVectorReader":
        """The reader of the deletion vectors of the table ``log`` (a
        :class:`sqlext.log.table.DeltaLog`) refers to."""
        return cls(lambda path: log.store.read(log.data_path(path)))

    def _read(self, path: str) -> bytes:
        if path not in self._contents:
            self._contents[path] = self._read_file(path)
        return self._contents[path]

    def load(self, deletion_vector: dict | None) -> RoaringBitmapArray | None:
        """The rows an action's ``deletionVector`` marks deleted (None without one)."""
        if not deletion_vector:
            return None
        return load_deletion_vector(DeletionVectorDescriptor.from_dict(deletion_vector),
                                    self._read)

    def deleted_mask(self, deletion_vector: dict | None, num_rows: int):
        """A numpy boolean mask over a file's ``num_rows`` rows, True for the rows its
        deletion vector deletes (None without one)."""
        import numpy as np

        bitmap = self.load(deletion_vector)
        if bitmap is None:
            return None
        mask = np.zeros(num_rows, dtype=bool)
        rows = bitmap.row_index_array()
        mask[rows[rows < num_rows]] = True
        return mask

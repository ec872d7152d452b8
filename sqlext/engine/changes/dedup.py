"""Post-processing of a raw change feed, following Spark 4's CHANGES clause
(``deduplicationMode`` ``dropCarryovers`` / ``netChanges``, ``computeUpdates``).

Every step is a window over the raw changes, so the whole read stays one lazy Spark plan.

- Carry-overs: a copy-on-write rewrite (an overwrite, or a rewrite of the files touched by a
  statement) records a row it only copied as a ``delete`` plus an identical ``insert`` in the same
  version. Within one version, identical ``delete``/``insert`` pairs cancel, counting duplicates
  (two deleted and three inserted copies of a row leave one insert). Spark 4 pairs rows by row id
  and row version; a Delta table without row tracking has neither, so the whole row value stands
  in for both, as in Iceberg's changelog view. ``update_preimage``/``update_postimage`` rows are
  written only for rows a statement matched, so they are real updates and never cancel, even
  when the new values equal the old ones.
- Updates (``computeUpdates``): within one version, one ``delete`` and one ``insert`` of the same
  identifier become ``update_preimage``/``update_postimage``.
- Net changes: one outcome per logical row over the whole range. With identifier columns, per
  key, Spark's matrix on whether the row existed before the range (its first change is a delete
  or pre-image) and after it (its last change is an insert or post-image): neither -> nothing,
  only after -> the last image as ``insert``, only before -> the first image as ``delete``, both ->
  first and last image (``update_preimage``/``update_postimage`` with ``computeUpdates``, else
  ``delete``/``insert``). Without identifier columns, by whole-row value as Iceberg does: the
  result is the multiset difference between the table before and after the range, as ``delete``
  rows and ``insert`` rows; after carry-overs are removed, a net delete keeps the version of the
  earliest remaining delete of that value, a net insert the version of the latest insert.
- Net changes always remove carry-overs first (Spark 4 does the same for ``netChanges``).
  Identifier columns must identify one row: the caller checks, before reading, that no key has
  two changes on the same side (delete/pre-image, insert/post-image) in one version.
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame, Window
from pyspark.sql import functions as F
from pyspark.sql import types as T

from sqlext.engine.schemas import quoted_column
from sqlext.log.changes_plan import (CHANGE_TYPE, COMMIT_TIMESTAMP, COMMIT_VERSION, DELETE,
                                        INSERT, POSTIMAGE, PREIMAGE)



def _ct() -> Column:
    return F.col(CHANGE_TYPE)


def _before() -> Column:
    """Whether a row is an image of the row as it was."""
    return _ct().isin(DELETE, PREIMAGE)


def _after() -> Column:
    """Whether a row is an image of the row as it became."""
    return _ct().isin(INSERT, POSTIMAGE)


def value_keys(df: DataFrame, columns: list[str]) -> list[Column]:
    """Expressions that group rows by the values of ``columns`` (maps, which Spark cannot group
    by, as their JSON text)."""
    types = {f.name: f.dataType for f in df.schema.fields}
    return [F.to_json(F.struct(quoted_column(c))) if _has_map(types[c]) else quoted_column(c)
            for c in columns]


def _has_map(dt: T.DataType) -> bool:
    if isinstance(dt, T.MapType):
        return True
    if isinstance(dt, T.StructType):
        return any(_has_map(f.dataType) for f in dt.fields)
    if isinstance(dt, T.ArrayType):
        return _has_map(dt.elementType)
    return False


def drop_carryovers(df: DataFrame, value_columns: list[str]) -> DataFrame:
    """Cancel identical ``delete``/``insert`` pairs within each version (duplicates counted)."""
    keys = value_keys(df, value_columns) + [F.col(COMMIT_VERSION)]
    pair = Window.partitionBy(*keys)
    deletes = F.sum(F.when(_ct() == DELETE, 1).otherwise(0)).over(pair)
    inserts = F.sum(F.when(_ct() == INSERT, 1).otherwise(0)).over(pair)
    nth = F.row_number().over(Window.partitionBy(*keys, _ct()).orderBy(F.col(COMMIT_TIMESTAMP)))
    keep = (((_ct() == DELETE) & (nth > inserts)) | ((_ct() == INSERT) & (nth > deletes))
            | ~_ct().isin(DELETE, INSERT))
    return _filtered(df, keep)


def compute_updates(df: DataFrame, keys: list[str]) -> DataFrame:
    """Label a ``delete`` and an ``insert`` of one key in one version as an update."""
    group = Window.partitionBy(*value_keys(df, keys), F.col(COMMIT_VERSION))
    deletes = F.sum(F.when(_ct() == DELETE, 1).otherwise(0)).over(group)
    inserts = F.sum(F.when(_ct() == INSERT, 1).otherwise(0)).over(group)
    update = (deletes == 1) & (inserts == 1)
    label = (F.when(update & (_ct() == DELETE), F.lit(PREIMAGE))
             .when(update & (_ct() == INSERT), F.lit(POSTIMAGE)).otherwise(_ct()))
    return df.withColumn(CHANGE_TYPE, label)


def net_changes_by_value(df: DataFrame, value_columns: list[str]) -> DataFrame:
    """The multiset difference the range made, as ``delete`` and ``insert`` rows."""
    keys = value_keys(df, value_columns)
    sign = F.when(_after(), 1).otherwise(-1)
    net = F.sum(sign).over(Window.partitionBy(*keys))
    # inserts keep their latest occurrences, deletes their earliest
    nth = F.row_number().over(Window.partitionBy(*keys, sign)
                              .orderBy(F.col(COMMIT_VERSION) * -sign, F.col(COMMIT_TIMESTAMP)))
    keep = ((net > 0) & (sign > 0) & (nth <= net)) | ((net < 0) & (sign < 0) & (nth <= -net))
    return _filtered(df, keep).withColumn(
        CHANGE_TYPE, F.when(_after(), F.lit(INSERT)).otherwise(F.lit(DELETE)))


def net_changes_by_key(df: DataFrame, keys: list[str], updates: bool) -> DataFrame:
    """One outcome per key over the range (Spark 4's net change matrix); with ``updates`` a key
    that existed before and after comes out as ``update_preimage``/``update_postimage``."""
    rank = F.when(_before(), 0).otherwise(1)       # within a version: old image, then new
    per_key = Window.partitionBy(*value_keys(df, keys)).orderBy(F.col(COMMIT_VERSION), rank)
    whole = per_key.rowsBetween(Window.unboundedPreceding, Window.unboundedFollowing)
    # all window values in one projection: one Window operator, one sort
    df = df.select("*", F.row_number().over(per_key).alias("__sqlext_nth"),
                   F.count(F.lit(1)).over(whole).alias("__sqlext_count"),
                   F.first(_ct()).over(whole).alias("__sqlext_first"),
                   F.last(_ct()).over(whole).alias("__sqlext_last"))
    existed = F.col("__sqlext_first").isin(DELETE, PREIMAGE)
    exists = F.col("__sqlext_last").isin(INSERT, POSTIMAGE)
    first = F.col("__sqlext_nth") == 1
    last = F.col("__sqlext_nth") == F.col("__sqlext_count")
    keep = (F.when(~existed & ~exists, False).when(~existed, last).when(~exists, first)
            .otherwise(first | last))
    label = (F.when(~existed & last, F.lit(INSERT)).when(~exists & first, F.lit(DELETE))
             .when(first, F.lit(PREIMAGE if updates else DELETE))
             .when(last, F.lit(POSTIMAGE if updates else INSERT)).otherwise(_ct()))
    helpers = ["__sqlext_nth", "__sqlext_count", "__sqlext_first", "__sqlext_last"]
    return df.filter(keep).withColumn(CHANGE_TYPE, label).drop(*helpers)


def duplicate_key(df: DataFrame, keys: list[str]) -> dict | None:
    """A key that has two images on the same side (before/after) in one version, or None.

    Runs a Spark job reading only the key columns.
    """
    side = F.when(_before(), F.lit("before")).otherwise(F.lit("after"))
    grouped = (df.select(*[quoted_column(k) for k in keys], F.col(COMMIT_VERSION), _ct(),
                         side.alias("__sqlext_side"))
               .groupBy(*value_keys(df, keys), F.col(COMMIT_VERSION), F.col("__sqlext_side"))
               .agg(F.count(F.lit(1)).alias("__sqlext_n"), F.min(_ct()).alias(CHANGE_TYPE),
                    *[F.first(quoted_column(k)).alias(f"__sqlext_k{i}")
                      for i, k in enumerate(keys)]))
    hit = grouped.filter(F.col("__sqlext_n") > 1).limit(1).collect()
    if not hit:
        return None
    row = hit[0]
    return {"key": {k: row[f"__sqlext_k{i}"] for i, k in enumerate(keys)},
            "version": row[COMMIT_VERSION], "change_type": row[CHANGE_TYPE],
            "count": row["__sqlext_n"]}


def _filtered(df: DataFrame, keep: Column) -> DataFrame:
    return df.withColumn("__sqlext_keep", keep).filter(F.col("__sqlext_keep")).drop(
        "__sqlext_keep")

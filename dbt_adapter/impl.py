"""The ``sqlext`` adapter: dbt-spark's adapter on sqlext's SQL front."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Tuple

from dbt.adapters.base import BaseRelation, available
from dbt.adapters.contracts.relation import RelationConfig
from dbt.adapters.spark.column import SparkColumn
from dbt.adapters.spark.impl import (GET_COLUMNS_IN_RELATION_RAW_MACRO_NAME,
                                     TABLE_OR_VIEW_NOT_FOUND_MESSAGES, SparkAdapter, SparkConfig)
from dbt_common.exceptions import DbtRuntimeError
from typing_extensions import TypeAlias

from dbt.adapters.sqlext import predicates
from dbt.adapters.sqlext.connections import SqlextConnectionManager
from dbt.adapters.sqlext.relation import SqlextRelation

#: messages that mean "no such table or view" (Spark's and sqlext's)
NOT_FOUND_MESSAGES = TABLE_OR_VIEW_NOT_FOUND_MESSAGES + (
    "TableNotFoundError", "is not a Delta table", "not found in sqlext's catalog", "not found")


@dataclass
class SqlextConfig(SparkConfig):
    file_format: str = "delta"


class SqlextAdapter(SparkAdapter):
    Relation: TypeAlias = SqlextRelation  # type: ignore[assignment]
    ConnectionManager: TypeAlias = SqlextConnectionManager  # type: ignore[assignment]
    AdapterSpecificConfigs: TypeAlias = SqlextConfig  # type: ignore[assignment]

    def get_columns_in_relation(self, relation: BaseRelation) -> List[SparkColumn]:
        """The relation's columns (``describe extended``); [] when it does not exist."""
        try:
            return super().get_columns_in_relation(relation)
        except DbtRuntimeError as exc:
            if any(m in (getattr(exc, "msg", "") or str(exc)) for m in NOT_FOUND_MESSAGES):
                return []
            raise

    def parse_describe_extended(self, relation: BaseRelation, raw_rows: Any) -> List[SparkColumn]:
        """dbt-spark's, with a missing owner as None (not the text 'None')."""
        columns = super().parse_describe_extended(relation, raw_rows)
        for column in columns:
            if column.table_owner == "None":
                column.table_owner = None
        return columns

    def _get_columns_for_catalog(self, relation: BaseRelation) -> Iterable[Dict[str, Any]]:
        """The catalog's columns, numbered from 1 as information_schema numbers them, with the
        relation's comment and its columns' comments (what ``persist_docs`` stored)."""
        table_comment, column_comments = self._relation_comments(relation)
        for column in super()._get_columns_for_catalog(relation):
            column["column_index"] = (column.get("column_index") or 0) + 1
            column["table_comment"] = table_comment
            column["column_comment"] = column_comments.get(column.get("column_name"))
            yield column

    def _relation_comments(self, relation: BaseRelation) -> Tuple[Optional[str], Dict[str, str]]:
        """The relation's comment and its columns' comments, from ``describe extended``."""
        try:
            rows = self.execute_macro(GET_COLUMNS_IN_RELATION_RAW_MACRO_NAME,
                                      kwargs={"relation": relation})
        except DbtRuntimeError:
            return None, {}
        dict_rows = [dict(zip(row._keys, row._values)) for row in rows]
        pos = self.find_table_information_separator(dict_rows)
        columns = {row["col_name"]: row["comment"] for row in dict_rows[:pos]
                   if row.get("comment")}
        details = {row["col_name"]: row["data_type"] for row in dict_rows[pos + 1:]}
        return details.get("Comment") or None, columns

    @available
    def sqlext_qualify_predicates(self, incremental_predicates: Any, alias: str) -> List[str]:
        """``incremental_predicates`` with bare columns qualified by ``alias`` (the target)."""
        return predicates.qualify(incremental_predicates, alias)

    @classmethod
    def _get_adapter_specific_run_info(cls, config: RelationConfig) -> Dict[str, Any]:
        return {"adapter_type": "sqlext", "table_format": "delta"}

"""The ``sqlext`` adapter: dbt-spark's adapter on sqlext's SQL front.

Relations and the columns of Delta tables are read from sqlext's catalog (see
:mod:`~dbt.adapters.sqlext.introspection`), not parsed back from ``SHOW TABLE EXTENDED`` text;
views and the tables Spark's own catalog holds are described by Spark (``describe extended``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Optional, Tuple

from dbt.adapters.base import BaseRelation, available
from dbt.adapters.base.impl import ConstraintSupport
from dbt.adapters.contracts.connection import AdapterResponse
from dbt.adapters.contracts.relation import RelationConfig, RelationType
from dbt.adapters.events.logging import AdapterLogger
from dbt.adapters.spark.column import SparkColumn
from dbt.adapters.spark.impl import (GET_COLUMNS_IN_RELATION_RAW_MACRO_NAME, SparkAdapter,
                                     SparkConfig)
from dbt_common.contracts.constraints import ConstraintType
from dbt_common.exceptions import DbtRuntimeError
from pyspark.sql import SparkSession
from typing_extensions import TypeAlias

from sqlext.errors import SqlextError, TableNotFoundError

from dbt.adapters.sqlext import contracts, introspection, predicates
from dbt.adapters.sqlext.connections import SqlextConnectionManager
from dbt.adapters.sqlext.relation import SqlextRelation

logger = AdapterLogger("sqlext")

#: error conditions that mean "no such table or view": Spark's, and delta-spark's for a path that
#: holds no Delta table. sqlext's TableNotFoundError (a name its catalog does not hold, a registered
#: table whose log is gone) means it too. Any other error is raised, whatever its words.
NOT_FOUND_CONDITIONS = frozenset({"TABLE_OR_VIEW_NOT_FOUND", "DELTA_MISSING_DELTA_TABLE",
                                  "DELTA_TABLE_NOT_FOUND"})

#: what ``incremental_strategy`` may be, each built by its macro ``get_incremental_<name>_sql``
INCREMENTAL_STRATEGIES = ("append", "merge", "delete+insert", "insert_overwrite", "replace_where",
                          "microbatch")


def is_missing_relation(error: BaseException) -> bool:
    """Whether ``error``, or the error it was raised from (dbt's ``DbtRuntimeError`` is raised
    from the statement's error), means the table or view does not exist: a
    :class:`TableNotFoundError`, or an error whose condition (``getCondition()``) is one of
    :data:`NOT_FOUND_CONDITIONS`."""
    seen: set[int] = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, TableNotFoundError):
            return True
        condition = getattr(error, "getCondition", None)
        if callable(condition) and str(condition() or "").split(".")[0] in NOT_FOUND_CONDITIONS:
            return True
        error = error.__cause__ or error.__context__
    return False


@dataclass
class SqlextConfig(SparkConfig):
    file_format: str = "delta"


class SqlextAdapter(SparkAdapter):
    Relation: TypeAlias = SqlextRelation  # type: ignore[assignment]
    ConnectionManager: TypeAlias = SqlextConnectionManager  # type: ignore[assignment]
    AdapterSpecificConfigs: TypeAlias = SqlextConfig  # type: ignore[assignment]

    #: Delta enforces CHECK and NOT NULL constraints on every write (dbt-core's view of what a
    #: contract's removed constraint means for ``state:modified``)
    CONSTRAINT_SUPPORT = {**SparkAdapter.CONSTRAINT_SUPPORT,
                          ConstraintType.check: ConstraintSupport.ENFORCED,
                          ConstraintType.not_null: ConstraintSupport.ENFORCED}

    @available
    def valid_incremental_strategies(self) -> List[str]:
        """The strategies sqlext builds (dbt-core validates ``incremental_strategy`` with it; the
        materialization names them when a model asks for another)."""
        return list(INCREMENTAL_STRATEGIES)

    def sqlext_session(self) -> SparkSession:
        """The SQL session of this thread's dbt connection."""
        return self.connections.get_thread_connection().handle.spark

    @available.parse_none
    def submit_python_job(self, parsed_model: dict, compiled_code: str) -> AdapterResponse:
        """Run a Python model's code in this process, on this thread's SQL session (dbt-spark
        sends it to a Databricks cluster; sqlext's dbt runs next to its SparkSession). The code
        (see the macro ``sqlext_py_write_table``) calls the model and commits what it returns
        with one ``sqlext.sql`` statement, under the same commit metadata as SQL models."""
        from sqlext.engine.commit import commit_metadata_scope

        from dbt.adapters.sqlext.connections import commit_user_metadata

        name = parsed_model.get("unique_id") or parsed_model.get("alias") or "python model"
        scope: Dict[str, Any] = {"__name__": "dbt_python_model", "spark": self.sqlext_session()}
        with self.connections.exception_handler(f"python model {name}"):
            # dbt-core's create_table_as indents the first line of what it dispatches to
            code = compile(compiled_code.lstrip(), f"<dbt {name}>", "exec")
            with commit_metadata_scope(commit_user_metadata()):
                exec(code, scope)  # noqa: S102 - the project's own model code, as dbt runs it
        return AdapterResponse(_message="OK")

    def list_relations_without_caching(self, schema_relation: BaseRelation) -> List[BaseRelation]:
        """The schema's relations from sqlext's catalog and Spark's; [] for an unknown schema."""
        with self.connections.exception_handler(f"list relations of {schema_relation.schema}"):
            listed = introspection.list_relations(self.sqlext_session(), schema_relation.schema)
        return [self.Relation.create(
                    schema=r.schema, identifier=r.name, is_delta=r.is_delta, is_iceberg=False,
                    is_hudi=False, type=RelationType.View if r.is_view else RelationType.Table)
                for r in listed]

    def get_columns_in_relation(self, relation: BaseRelation) -> List[SparkColumn]:
        """The relation's columns: a Delta table's from its log, others' by ``describe
        extended``; [] when the relation does not exist."""
        try:
            facts = self.delta_table_facts(relation)
        except TableNotFoundError:
            return []
        if facts is not None:
            return self.delta_table_columns(relation, facts)
        try:   # dbt-spark's, deciding on the error (is_missing_relation), not on its words
            rows = self.execute_macro(GET_COLUMNS_IN_RELATION_RAW_MACRO_NAME,
                                      kwargs={"relation": relation})
        except DbtRuntimeError as exc:
            if is_missing_relation(exc):
                return []
            raise
        return [c for c in self.parse_describe_extended(relation, rows)
                if c.name not in self.HUDI_METADATA_COLUMNS]

    def delta_table_facts(self, relation: BaseRelation) -> Optional[introspection.DeltaTableFacts]:
        """The columns and comment of the Delta table ``relation`` names, from sqlext's catalog;
        None for a view, a relation named without its schema (a temporary view), or a name
        sqlext does not register. Raises TableNotFoundError when the table's log is gone."""
        if not (relation.schema and relation.identifier and relation.include_policy.schema):
            return None
        try:
            return introspection.delta_table_facts(self.sqlext_session(), relation.schema,
                                                   relation.identifier)
        except TableNotFoundError:
            raise
        except SqlextError as exc:      # as dbt reports a failed statement
            raise DbtRuntimeError(str(exc)) from exc

    @staticmethod
    def delta_table_columns(relation: BaseRelation,
                            facts: introspection.DeltaTableFacts) -> List[SparkColumn]:
        """``facts``' columns as dbt-spark's columns (no owner, no statistics: Delta has none)."""
        return [SparkColumn(table_database=None, table_schema=relation.schema,
                            table_name=relation.name, table_type=relation.type, table_owner=None,
                            table_stats=None, column=c.name, column_index=i, dtype=c.data_type)
                for i, c in enumerate(facts.columns)]

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
        try:
            facts = self.delta_table_facts(relation)
        except TableNotFoundError:
            return
        if facts is not None:
            columns = self.delta_table_columns(relation, facts)
            table_comment = facts.comment
            column_comments = {c.name: c.comment for c in facts.columns if c.comment}
        else:
            try:
                columns = self.get_columns_in_relation(relation)
            except DbtRuntimeError as exc:     # as dbt-spark: the catalog leaves it out
                logger.debug(f"sqlext: no catalog columns for {relation}: {exc}")
                columns = []
            table_comment, column_comments = self._relation_comments(relation)
        for column in columns:
            as_dict = column.to_column_dict()
            as_dict["column_name"] = as_dict.pop("column", None)
            as_dict["column_type"] = as_dict.pop("dtype")
            as_dict["table_database"] = None
            as_dict["column_index"] = (as_dict.get("column_index") or 0) + 1
            as_dict["table_comment"] = table_comment
            as_dict["column_comment"] = column_comments.get(as_dict["column_name"])
            yield as_dict

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
    def sqlext_contract_checks(self, model: Dict[str, Any]) -> Dict[str, str]:
        """``{name: expression}`` of the model's contract's check constraints (see
        :mod:`~dbt.adapters.sqlext.contracts`)."""
        return contracts.check_constraints(model)

    @available
    def sqlext_tblproperties(self, configured: Optional[Dict[str, Any]],
                             checks: Optional[Dict[str, str]]) -> str:
        """The model's ``tblproperties (...)`` clause, its contract's checks included."""
        return contracts.tblproperties_sql(configured, checks)

    @available
    def sqlext_contract_drift(self, relation: BaseRelation, checks: Dict[str, str]) -> List[str]:
        """How the Delta table's CHECK constraints differ from ``checks`` (empty: they agree, or
        the relation is not a Delta table sqlext registers)."""
        facts = self.delta_table_facts(relation)
        return [] if facts is None else contracts.drift(checks, facts.checks)

    @available
    def sqlext_qualify_predicates(self, incremental_predicates: Any, alias: str) -> List[str]:
        """``incremental_predicates`` with bare columns qualified by ``alias`` (the target)."""
        return predicates.qualify(incremental_predicates, alias)

    @classmethod
    def _get_adapter_specific_run_info(cls, config: RelationConfig) -> Dict[str, Any]:
        return {"adapter_type": "sqlext", "table_format": "delta"}

"""dbt-tests-adapter's persist_docs and dbt clone suites on ``type: sqlext``.

persist_docs: relation comments through ``comment '...'`` at creation, column comments through
``alter table ... change column c comment '...'`` (a metadata-only Delta commit) and, on views,
the column list of ``create or replace view``; ``dbt docs generate`` reads them back. dbt clone:
tables become Delta shallow clones, views become views.
"""

import pytest
from dbt.tests.adapter.dbt_clone.test_dbt_clone import BaseClonePossible
from dbt.tests.adapter.persist_docs.test_persist_docs import (
    BasePersistDocs,
    BasePersistDocsColumnMissing,
    BasePersistDocsCommentOnQuotedColumn,
)
from dbt.tests.util import run_dbt
from deltalake import DeltaTable

from sqlext.catalog import Catalog
from sqlext.log.table import DeltaLog


class TestPersistDocs(BasePersistDocs):
    def test_comments_are_in_the_delta_log(self, project, spark):
        """The table model's comments are Delta's: the description in metaData, column comments
        in the schema fields' metadata (as delta-rs reads them), set by CHANGE COLUMN commits."""
        ref = Catalog(spark).resolve(f"{project.test_schema}.table_model")
        fields = {f.name: f.metadata for f in DeltaTable(ref.location).schema().fields}
        assert fields["id"]["comment"].startswith("id Column description")
        assert "/* comment */" in fields["id"]["comment"]
        assert fields["name"]["comment"].startswith("Some stuff here and then a call to")
        assert DeltaTable(ref.location).metadata().description.startswith(
            "Table model description")
        history = DeltaLog(ref.location).history()
        operations = [c.commit_info.operation for c in history]
        assert operations.count("CHANGE COLUMN") == 2


class TestPersistDocsColumnMissing(BasePersistDocsColumnMissing):
    pass


class TestPersistDocsCommentOnQuotedColumn(BasePersistDocsCommentOnQuotedColumn):
    pass


class TestClonePossible(BaseClonePossible):
    def test_tables_are_shallow_clones(self, project, unique_schema, other_schema, spark):
        project.create_test_schema(other_schema)
        self.run_and_save_state(project.project_root, with_snapshot=True)
        run_dbt(["clone", "--state", "state", "--target", "otherschema", "--full-refresh"])
        catalog = Catalog(spark)
        source = catalog.resolve(f"{unique_schema}.table_model")
        clone = catalog.resolve(f"{other_schema}.table_model")
        log = DeltaLog(clone.location)
        info = log.history()[0].commit_info.values
        assert info["operation"] == "CLONE"
        assert info["operationParameters"]["isShallow"] == "true"
        source_files = {DeltaLog(source.location).data_path(f.path)
                        for f in DeltaLog(source.location).snapshot().files}
        assert {log.data_path(f.path) for f in log.snapshot().files} == source_files

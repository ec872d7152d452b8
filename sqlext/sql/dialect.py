"""The ``sqlext`` sqlglot dialect: Spark SQL plus the Delta Lake statements and clauses.

Importing this module registers the dialect under the name ``"sqlext"``, so
``sqlglot.parse_one(sql, read="sqlext")`` and ``expr.sql(dialect="sqlext")`` work. What it adds
to sqlglot's Spark dialect (the nodes are in :mod:`sqlext.sql.nodes`):

- ``t CHANGES FROM VERSION|TIMESTAMP a [TO ... b] [WITH (...)]`` in any table position
  (:class:`~sqlext.sql.nodes.ChangesClause` in ``Table.args["changes"]``);
- ``t@v3`` and ``t@yyyyMMddHHmmssSSS`` (read as ``VERSION AS OF`` / ``TIMESTAMP AS OF``, the
  same ``exp.Version`` sqlglot builds), and ``SYSTEM_VERSION`` / ``SYSTEM_TIME AS OF``;
- ``MERGE WITH SCHEMA EVOLUTION INTO`` (every MERGE is a :class:`~sqlext.sql.nodes.MergeInto`);
- ``DESCRIBE HISTORY|DETAIL``, ``SHOW TABLES|TBLPROPERTIES|CREATE TABLE``, ``VACUUM``,
  ``OPTIMIZE``, ``RESTORE``. Other ``SHOW`` statements become an ``exp.Command``.
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot import parser as sqlglot_parser
from sqlglot.dialects.spark import Spark
from sqlglot.tokens import Token, TokenType
from sqlglot.trie import new_trie

from sqlext.sql import nodes

_VERSION_SUFFIX = re.compile(r"[vV](\d+)")
_TIMESTAMP_SUFFIX = re.compile(r"(\d{4})(\d\d)(\d\d)(\d\d)(\d\d)(\d\d)(\d{3})")
_OPTION_VALUE_TOKENS = {
    TokenType.STRING, TokenType.NUMBER, TokenType.TRUE, TokenType.FALSE, TokenType.DASH,
}  # fmt: skip
_LOCATION_RANK = {
    loc: i
    for i, loc in enumerate(
        exp.Properties.Location[name]
        for name in (
            "POST_CREATE", "POST_NAME", "POST_SCHEMA", "POST_WITH",
            "POST_ALIAS", "POST_EXPRESSION", "POST_INDEX",
        )
    )
}  # fmt: skip
_PLAIN_NAME = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


_CHAR_TYPES = (exp.DataType.Type.CHAR, exp.DataType.Type.VARCHAR)


class Sqlext(Spark):
    """Spark SQL with Delta Lake's statements; see the module docstring for what it adds."""

    class Tokenizer(Spark.Tokenizer):
        # VACUUM and OPTIMIZE are ordinary words here, parsed into nodes rather than swallowed
        # whole into a Command; SHOW is parsed too (unknown SHOW forms still become a Command).
        KEYWORDS = {
            k: v for k, v in Spark.Tokenizer.KEYWORDS.items() if k not in ("VACUUM", "OPTIMIZE")
        }
        COMMANDS = Spark.Tokenizer.COMMANDS - {TokenType.SHOW}

    class Parser(Spark.Parser):
        VERSION_PHRASES = {
            **Spark.Parser.VERSION_PHRASES,
            ("SYSTEM_VERSION", "AS", "OF"): "VERSION",
            ("SYSTEM_TIME", "AS", "OF"): "TIMESTAMP",
        }

        STATEMENT_PARSERS = {
            **Spark.Parser.STATEMENT_PARSERS,
            TokenType.SHOW: lambda self: self._parse_show(),
        }

        def _parse_types(self, check_func: bool = False, schema: bool = False,
                         allow_identifiers: bool = True, with_collation: bool = False):
            # Hive's parser turns CHAR/VARCHAR outside a schema into STRING (Spark's CAST ignores
            # the length), testing every type node with DataType.is_type("char", "varchar"),
            # which parses both names again each time: two thirds of parsing a dbt seed's
            # VALUES of casts. The same rule, with the type compared directly.
            this = sqlglot_parser.Parser._parse_types(
                self, check_func=check_func, schema=schema, allow_identifiers=allow_identifiers,
                with_collation=with_collation)
            if this is None or schema:
                return this

            def to_text(node: exp.Expression) -> exp.Expression:
                if isinstance(node, exp.DataType) and node.this in _CHAR_TYPES:
                    node.set("this", exp.DataType.Type.TEXT)
                    node.set("expressions", None)
                return node

            return this.transform(to_text, copy=False)

        # statements introduced by a plain word (not a keyword token)
        WORD_STATEMENT_PARSERS = {
            "VACUUM": lambda self: self._parse_vacuum(),
            "OPTIMIZE": lambda self: self._parse_optimize(),
            "REORG": lambda self: self._parse_reorg(),
            "RESTORE": lambda self: self._parse_restore(),
            "CONVERT": lambda self: self._parse_convert(),
            "GENERATE": lambda self: self._parse_generate(),
        }

        SHOW_PARSERS = {
            "TABLES": lambda self: self._parse_show_tables(),
            "TBLPROPERTIES": lambda self: self._parse_show_tblproperties(),
            "CREATE TABLE": lambda self: self._parse_show_create_table(),
        }
        SHOW_TRIE = new_trie(key.split(" ") for key in SHOW_PARSERS)

        # --- statements ----------------------------------------------------------------------

        def _parse_statement(self) -> exp.Expr | None:
            word = self._curr.text.upper() if self._curr.token_type == TokenType.VAR else None
            parser = self.WORD_STATEMENT_PARSERS.get(word) if word else None
            if parser is None:
                return super()._parse_statement()
            self._advance()
            comments = self._prev_comments
            stmt = parser(self)
            stmt.add_comments(comments, prepend=True)
            return stmt

        def _parse_target_table(self) -> exp.Table:
            """A table name, or a path string, which becomes ``delta.`path```."""
            if self._match(TokenType.STRING):
                path = exp.to_identifier(self._prev.text, quoted=True)
                return self.expression(exp.Table(this=path, db=exp.to_identifier("delta")))
            return self._parse_table_parts(schema=True)

        def _parse_vacuum(self) -> nodes.Vacuum:
            args: dict = {"this": self._parse_target_table(), "dry_run": False}
            while True:
                if self._match_texts(("LITE", "FULL")):
                    args["mode"] = self._prev.text.upper()
                elif self._match_text_seq("RETAIN"):
                    args["retain"] = self._parse_unary()
                    if not self._match_text_seq("HOURS"):
                        self.raise_error("Expected HOURS after RETAIN <number>")
                elif self._match_text_seq("DRY", "RUN"):
                    args["dry_run"] = True
                else:
                    break
            return self.expression(nodes.Vacuum(**args))

        def _parse_optimize(self) -> nodes.Optimize:
            table = self._parse_target_table()
            where = self._parse_where()
            zorder = None
            if self._match_text_seq("ZORDER", "BY"):
                if self._curr.token_type == TokenType.L_PAREN:
                    zorder = self._parse_wrapped_csv(self._parse_column)
                else:
                    zorder = self._parse_csv(self._parse_column)
            return self.expression(nodes.Optimize(this=table, where=where, zorder=zorder))

        def _parse_reorg(self) -> nodes.Reorg:
            self._match(TokenType.TABLE)
            table = self._parse_target_table()
            where = self._parse_where()
            if not self._match_text_seq("APPLY"):
                self.raise_error("Expected APPLY (PURGE) after REORG TABLE <table> [WHERE ...]")
            if not (self._match(TokenType.L_PAREN) and self._match_text_seq("PURGE")
                    and self._match(TokenType.R_PAREN)):
                self.raise_error("sqlext supports REORG TABLE <table> APPLY (PURGE) only")
            return self.expression(nodes.Reorg(this=table, where=where))

        def _parse_restore(self) -> nodes.Restore:
            self._match(TokenType.TABLE)
            table = self._parse_target_table()
            self._match_text_seq("TO")
            version = self._parse_version()
            if not version or version.text("kind") != "AS OF":
                self.raise_error("Expected VERSION AS OF <version> or TIMESTAMP AS OF <timestamp>")
            return self.expression(nodes.Restore(this=table, version=version))

        def _parse_convert(self) -> nodes.ConvertToDelta:
            if not self._match_text_seq("TO", "DELTA"):
                self.raise_error("Expected CONVERT TO DELTA parquet.`/path`")
            table = self._parse_table_parts(schema=True)
            no_statistics = self._match_text_seq("NO", "STATISTICS")
            partitions = None
            if self._match(TokenType.PARTITION_BY):
                partitions = self._parse_wrapped_csv(self._parse_field_def)
            return self.expression(nodes.ConvertToDelta(this=table, partitions=partitions,
                                                        no_statistics=no_statistics))

        def _parse_generate(self) -> nodes.Generate:
            mode = self._parse_var(any_token=True)
            if mode is None or not self._match_text_seq("FOR", "TABLE"):
                self.raise_error("Expected GENERATE symlink_format_manifest FOR TABLE <table>")
            return self.expression(nodes.Generate(this=self._parse_target_table(),
                                                  mode=mode.name))

        def _parse_describe(self) -> exp.Expr:
            word = self._curr.text.upper()
            if word in ("HISTORY", "DETAIL") and self._curr.token_type == TokenType.VAR:
                if not self._next:  # DESCRIBE history: a table named "history"
                    return self.expression(exp.Describe(this=self._parse_table_parts(schema=True)))
                if self._next.token_type == TokenType.DOT:
                    return super()._parse_describe()
                self._advance()
                table = self._parse_target_table()
                if word == "DETAIL":
                    return self.expression(nodes.DescribeDetail(this=table))
                limit = None
                if self._match(TokenType.LIMIT):
                    limit = self._parse_number()
                    if limit is None:
                        self.raise_error("Expected a number after LIMIT")
                return self.expression(nodes.DescribeHistory(this=table, limit=limit))
            return super()._parse_describe()

        def _parse_show_tables(self) -> nodes.ShowTables:
            db = None
            if self._match_set((TokenType.IN, TokenType.FROM)):
                db = self._parse_table_parts(is_db_reference=True)
            self._match(TokenType.LIKE)
            return self.expression(nodes.ShowTables(db=db, like=self._parse_string()))

        def _parse_show_tblproperties(self) -> nodes.ShowTblProperties:
            table = self._parse_table_parts(schema=True)
            key = None
            if self._match(TokenType.L_PAREN):
                key = self._parse_string() or exp.Literal.string(self._parse_dotted_name())
                self._match_r_paren()
            return self.expression(nodes.ShowTblProperties(this=table, key=key))

        def _parse_show_create_table(self) -> nodes.ShowCreateTable:
            table = self._parse_table_parts(schema=True)
            as_serde = self._match_text_seq("AS", "SERDE")
            return self.expression(nodes.ShowCreateTable(this=table, as_serde=as_serde))

        def _parse_create(self) -> exp.Expr:
            """sqlglot's CREATE, its properties put in the order the generator writes them.

            So the tree of rendered SQL equals the tree parsed (``COMMENT`` may be written after
            ``TBLPROPERTIES`` but is rendered before it).
            """
            if self._at_clone():
                return self._parse_clone()
            create = super()._parse_create()
            props = create.args.get("properties") if isinstance(create, exp.Create) else None
            if props:
                props.set("expressions", sorted(props.expressions, key=self._property_rank))
            return create

        def _parse_alter_table_change(self) -> exp.Expr | None:
            """``CHANGE [COLUMN] c COMMENT '...'`` (Delta's way to set only a column's comment)
            as ``ALTER COLUMN c COMMENT '...'``, ``CHANGE [COLUMN] c SET|DROP NOT NULL`` (the
            form dbt-spark's contracts emit) as ``ALTER COLUMN c SET|DROP NOT NULL``,
            ``CHANGE [COLUMN] c SYNC IDENTITY`` as ``ALTER COLUMN c SYNC IDENTITY``; other
            forms as Hive's ``CHANGE``."""
            index = self._index
            self._match(TokenType.COLUMN)
            column = self._parse_field(any_token=True)
            if column is not None and self._match_text_seq("SYNC", "IDENTITY"):
                return self.expression(nodes.SyncIdentity(this=column))
            if column is not None and self._match(TokenType.COMMENT):
                return self.expression(exp.AlterColumn(this=column, comment=self._parse_string()))
            if column is not None and self._match_text_seq("SET", "NOT", "NULL"):
                return self.expression(exp.AlterColumn(this=column, allow_null=False))
            if column is not None and self._match_text_seq("DROP", "NOT", "NULL"):
                return self.expression(exp.AlterColumn(this=column, drop=True, allow_null=True))
            nested = self._parse_nested_type_change(column)
            if nested is not None:
                return nested
            self._retreat(index)
            change = self._parse_hive_change()
            if change is not None:
                return change
            self._retreat(index)
            return super()._parse_alter_table_change()

        def _parse_hive_change(self) -> nodes.ChangeColumn | None:
            """``[COLUMN] path [name type] [COMMENT '...'] [FIRST | AFTER c]`` after ``CHANGE``
            when ``path`` is nested or a position is given (sqlglot parses neither); None for
            the forms sqlglot reads itself."""
            self._match(TokenType.COLUMN)
            parts = self._parse_field_parts(self._parse_field(any_token=True))
            if parts is None:
                return None
            path = self._field_path(parts)
            if len(parts) > 1 and self._match(TokenType.COMMENT):
                return self.expression(nodes.ChangeColumn(this=path, comment=self._parse_string()))
            name = self._parse_field(any_token=True)
            dtype = self._parse_types() if name is not None else None
            if dtype is None:
                return None
            # NOT NULL is refused when planned, as Spark's parser refuses it
            allow_null = False if self._match_text_seq("NOT", "NULL") else None
            comment = self._parse_string() if self._match(TokenType.COMMENT) else None
            position = None
            if self._match_text_seq("FIRST"):
                position = exp.ColumnPosition(position="FIRST")
            elif self._match_text_seq("AFTER"):
                position = exp.ColumnPosition(position="AFTER",
                                              this=self._parse_field(any_token=True))
            if len(parts) == 1 and position is None and allow_null is None:
                return None
            return self.expression(nodes.ChangeColumn(this=path, rename_to=name, dtype=dtype,
                                                      comment=comment, position=position,
                                                      allow_null=allow_null))

        def _parse_field_parts(self, column) -> list | None:
            """``column`` and the ``.name`` parts after it (None if one is missing)."""
            parts = [column]
            while column is not None and self._match(TokenType.DOT):
                parts.append(self._parse_field(any_token=True))
            return None if None in parts else parts

        @staticmethod
        def _field_path(parts: list) -> exp.Column:
            """A column for the dotted field path ``parts`` (``s.x`` -> ``x`` of table ``s``)."""
            head = list(reversed(parts[:4]))
            return exp.column(*head, fields=parts[4:] or None)

        def _parse_nested_type_change(self, column) -> exp.Expr | None:
            """``s.x TYPE t`` (and ``s.x COMMENT '...'``) after ``ALTER|CHANGE [COLUMN]``: a
            nested field's type (struct field, ``element``, ``key``, ``value``) or comment
            change, which sqlglot does not parse."""
            parts = self._parse_field_parts(column)
            if parts is None or len(parts) < 2:
                return None
            if self._match_text_seq("TYPE"):
                return self.expression(exp.AlterColumn(this=self._field_path(parts),
                                                       dtype=self._parse_types()))
            if self._match(TokenType.COMMENT):
                return self.expression(exp.AlterColumn(this=self._field_path(parts),
                                                       comment=self._parse_string()))
            return None

        def _parse_alter_table_alter(self) -> exp.Expr | None:
            """Delta's ``ALTER [COLUMN] c SYNC IDENTITY``; other forms as sqlglot's."""
            index = self._index
            self._match(TokenType.COLUMN)
            column = self._parse_field(any_token=True)
            if column is not None and self._match_text_seq("SYNC", "IDENTITY"):
                return self.expression(nodes.SyncIdentity(this=column))
            nested = self._parse_nested_type_change(column)
            if nested is not None:
                return nested
            self._retreat(index)
            return super()._parse_alter_table_alter()

        def _at_clone(self) -> bool:
            """``CREATE [OR REPLACE] TABLE [IF NOT EXISTS] t SHALLOW|DEEP CLONE ...`` ahead."""
            words = []
            for token in self._tokens[self._index:self._index + 16]:
                if token.token_type in (TokenType.L_PAREN, TokenType.ALIAS, TokenType.SELECT):
                    return False
                words.append(token.text.upper())
                if words[-2:] in (["SHALLOW", "CLONE"], ["DEEP", "CLONE"]):
                    return bool(words) and "TABLE" in words
            return False

        def _parse_clone(self) -> exp.Create:
            """Delta's ``CREATE [OR REPLACE] TABLE [IF NOT EXISTS] t SHALLOW CLONE source
            [VERSION AS OF n | TIMESTAMP AS OF ts] [TBLPROPERTIES (...)] [LOCATION 'path']``, as
            an ``exp.Create`` whose ``clone`` holds the source (its ``version`` the time
            travel); ``DEEP CLONE`` parses with ``shallow=False`` for the planner to refuse."""
            replace = self._match_text_seq("OR", "REPLACE")
            if not self._match(TokenType.TABLE):
                self.raise_error("Expected TABLE after CREATE [OR REPLACE]")
            exists = self._parse_exists(not_=True)
            target = self._parse_target_table()
            shallow = not self._match_text_seq("DEEP")
            self._match_text_seq("SHALLOW")
            if not self._match_text_seq("CLONE"):
                self.raise_error("Expected CLONE")
            source = self._parse_target_table()
            version = self._parse_version()
            if version is not None:
                source.set("version", version)
            properties = self._parse_properties()
            return self.expression(exp.Create(
                this=target, kind="TABLE", replace=bool(replace), exists=bool(exists),
                properties=properties, clone=exp.Clone(this=source, shallow=shallow)))

        def _property_rank(self, prop: exp.Expr) -> int:
            location = self.dialect.generator_class.PROPERTIES_LOCATION.get(type(prop))
            return _LOCATION_RANK.get(location, len(_LOCATION_RANK))

        def _parse_merge(self) -> nodes.MergeInto:
            evolution = self._match_text_seq("WITH", "SCHEMA", "EVOLUTION")
            merge = super()._parse_merge()
            node = nodes.MergeInto(**merge.args, schema_evolution=evolution)
            node.add_comments(merge.comments)
            return self.expression(node)

        # --- table references ----------------------------------------------------------------

        def _at_changes_clause(self) -> bool:
            return self._curr.text.upper() == "CHANGES" and self._next.token_type == TokenType.FROM

        def _at_version_suffix(self) -> bool:
            """``@v3`` / ``@20240101000000000`` written right against the table name."""
            at, value = self._curr, self._next
            return (
                at.token_type == TokenType.PARAMETER
                and at.text == "@"
                and self._is_connected()
                and bool(value)
                and value.start == at.end + 1
                and bool(
                    _VERSION_SUFFIX.fullmatch(value.text)
                    or (
                        value.token_type == TokenType.NUMBER
                        and _TIMESTAMP_SUFFIX.fullmatch(value.text)
                    )
                )
            )

        def _parse_table_alias(self, alias_tokens=None) -> exp.TableAlias | None:
            if self._at_changes_clause() or self._at_version_suffix():
                return None
            return super()._parse_table_alias(alias_tokens)

        def _parse_version(self) -> exp.Version | None:
            if not self._at_version_suffix():
                return super()._parse_version()
            self._advance()
            token: Token = self._curr
            self._advance()
            version = _VERSION_SUFFIX.fullmatch(token.text)
            if version:
                this, value = "VERSION", exp.Literal.number(int(version.group(1)))
            else:
                y, mo, d, h, mi, s, ms = _TIMESTAMP_SUFFIX.fullmatch(token.text).groups()
                this, value = "TIMESTAMP", exp.Literal.string(f"{y}-{mo}-{d} {h}:{mi}:{s}.{ms}")
            return self.expression(exp.Version(this=this, kind="AS OF", expression=value))

        def _parse_changes(self) -> exp.Expr | None:
            if not self._at_changes_clause():
                return super()._parse_changes()
            self._advance(2)
            kind = self._parse_changes_kind()
            start = self._parse_bitwise()
            end = None
            if self._match_text_seq("TO"):
                if not self._match_texts((kind,)):
                    self.raise_error(f"Expected {kind} after TO: both ends of CHANGES are one kind")
                end = self._parse_bitwise()
            options = None
            if (
                self._curr.token_type == TokenType.WITH
                and self._next.token_type == TokenType.L_PAREN
            ):
                self._advance()
                options = self._parse_wrapped_csv(self._parse_changes_option)
            return self.expression(
                nodes.ChangesClause(kind=kind, start=start, end=end, options=options)
            )

        def _parse_changes_kind(self) -> str:
            if not self._match_texts(("VERSION", "TIMESTAMP")):
                self.raise_error("Expected VERSION or TIMESTAMP")
            return self._prev.text.upper()

        def _parse_changes_option(self) -> exp.Property:
            key: exp.Expr | None = self._parse_string()
            if key is None:
                name = self._parse_dotted_name()
                key = exp.var(name) if _PLAIN_NAME.fullmatch(name) else exp.Literal.string(name)
            self._match(TokenType.EQ)
            if self._curr.token_type not in _OPTION_VALUE_TOKENS:
                self.raise_error("Expected a literal option value")
            value = self._parse_unary()
            return self.expression(exp.Property(this=key, value=value))

        def _parse_dotted_name(self) -> str:
            """``a.b.c`` (any words, backticks allowed) as one string."""
            parts = []
            while True:
                part = self._parse_id_var(any_token=True)
                if part is None:
                    self.raise_error("Expected a name")
                    break
                parts.append(part.name)
                if not self._match(TokenType.DOT):
                    break
            return ".".join(parts)

        def _warn_unsupported(self) -> None:
            """Silent: a statement read as a Command is passed through to Spark, not an error."""

        def raise_error(self, message: str, token: Token | None = None) -> None:
            """Record the offending token, so the caller can report where the error is."""
            token = token or self._curr or self._prev or Token.string("")
            self.error_token = token
            super().raise_error(message, token)

    class Generator(Spark.Generator):
        TRANSFORMS = {**Spark.Generator.TRANSFORMS, **nodes.GENERATORS}

{#-- How sqlext creates, alters and lists relations. Everything not here is dbt-spark's macro
     (adapter.dispatch falls back from sqlext__ to spark__ to default__). --#}

{% macro sqlext__get_binding_char() %}
  {{ return('?') }}
{% endmacro %}


{#-- The file format of a model: delta unless the model says otherwise. --#}
{% macro sqlext_file_format() %}
  {{ return(config.get('file_format', validator=validation.any[basestring]) or 'delta') }}
{% endmacro %}


{% macro sqlext__file_format_clause() %}
  using {{ sqlext_file_format() }}
{%- endmacro %}


{#-- location_root from the model's config, else from the profile's location_root --#}
{% macro sqlext__location_clause() %}
  {%- set location_root = config.get('location_root', validator=validation.any[basestring]) or target.location_root -%}
  {%- if location_root %}
    location '{{ location_root | replace("\\", "\\\\") | replace("'", "\\'") }}/{{ model['alias'] }}'
  {%- endif %}
{%- endmacro %}


{#-- The model's tblproperties, and with an enforced contract (on a Delta table) its check
     constraints as Delta CHECK constraints `delta.constraints.<name>`
     (dbt/adapters/sqlext/contracts.py): the create or replace that builds the table commits
     them with its rows, checked against them, and drops those the contract no longer has. --#}
{% macro sqlext__tblproperties_clause() -%}
  {{ adapter.sqlext_tblproperties(config.get('tblproperties'), sqlext_contract_checks()) }}
{%- endmacro %}


{#-- {name: expression} of the model's enforced contract's check constraints ({} without one) --#}
{% macro sqlext_contract_checks() %}
  {%- set contract_config = config.get('contract') -%}
  {%- if contract_config and contract_config.enforced and sqlext_file_format() == 'delta' -%}
    {{ return(adapter.sqlext_contract_checks(model)) }}
  {%- endif -%}
  {{ return({}) }}
{% endmacro %}


{#-- After the table is built: its checks came with it (above); column-level not_null becomes
     `alter table ... change column c set not null`, as on dbt-spark. Delta does not enforce
     unique, primary_key or foreign_key: column-level ones are warned about, model-level ones
     skipped, as on dbt-spark. --#}
{% macro sqlext__persist_constraints(relation, model) %}
  {%- set contract_config = config.get('contract') -%}
  {% if contract_config.enforced and sqlext_file_format() == 'delta' %}
    {% do alter_column_set_constraints(relation, model.columns) %}
  {% endif %}
{% endmacro %}


{% macro sqlext__alter_column_set_constraints(relation, column_dict) %}
  {% for column_name in column_dict %}
    {% for constraint in column_dict[column_name]['constraints'] %}
      {% if constraint.type == 'not_null' %}
        {% set quoted_name = adapter.quote(column_name) if column_dict[column_name]['quote'] else column_name %}
        {% call statement() %}
          alter table {{ relation }} change column {{ quoted_name }} set not null
        {% endcall %}
      {% elif constraint.type != 'check' %}
        {{ exceptions.warn('Constraint ' ~ constraint.type ~ ' on column ' ~ column_name ~ ' of ' ~ relation ~ ' is not enforced: Delta enforces not_null and check constraints only.') }}
      {% endif %}
    {% endfor %}
  {% endfor %}
{% endmacro %}


{#-- An incremental run keeps the table's CHECK constraints (they check this run's rows); warn
     when the contract's differ from them: the next full build makes them the contract's. --#}
{% macro sqlext_warn_contract_drift(relation) %}
  {%- set checks = sqlext_contract_checks() -%}
  {%- set contract_config = config.get('contract') -%}
  {%- if contract_config and contract_config.enforced and sqlext_file_format() == 'delta' -%}
    {%- set differences = adapter.sqlext_contract_drift(relation, checks) -%}
    {%- if differences -%}
      {{ exceptions.warn('The check constraints of ' ~ relation ~ ' differ from its contract: ' ~ differences | join('; ') ~ '. An incremental run keeps those the table has; run with --full-refresh to build it with those of the contract.') }}
    {%- endif -%}
  {%- endif -%}
{% endmacro %}


{#-- using <format>, options, tblproperties, partitioned by, clustered by, location, comment --#}
{% macro sqlext_table_clauses() -%}
  {{ file_format_clause() }}
  {{ options_clause() }}
  {{ tblproperties_clause() }}
  {{ partition_cols(label="partitioned by") }}
  {{ clustered_cols(label="clustered by") }}
  {{ location_clause() }}
  {{ comment_clause() }}
{%- endmacro %}


{% macro sqlext__create_table_as(temporary, relation, compiled_code, language='sql') -%}
  {%- if language == 'python' -%}
    {{ sqlext_py_write_table(temporary, relation, compiled_code) }}
  {%- elif temporary -%}
    {{ create_temporary_view(relation, compiled_code) }}
  {%- else -%}
    {%- if sqlext_file_format() in ['delta', 'iceberg'] %}
      create or replace table {{ relation }}
    {%- else %}
      create table {{ relation }}
    {%- endif %}
    {%- set contract_config = config.get('contract') -%}
    {%- if contract_config.enforced -%}
      {{ get_assert_columns_equivalent(compiled_code) }}
      {%- set compiled_code = get_select_subquery(compiled_code) %}
    {% endif %}
    {{ sqlext_table_clauses() }}
    as
    {{ compiled_code }}
  {%- endif -%}
{%- endmacro %}


{#-- Rewrite a table in one commit (a new version of the same table) with the given select list:
     how sqlext drops columns and changes column types, which Delta tables without column
     mapping cannot do in place. --#}
{% macro sqlext_rewrite_table(relation, select_list) %}
  {% set sql %}
    create or replace table {{ relation }}
    using delta
    {{ tblproperties_clause() }}
    {{ partition_cols(label="partitioned by") }}
    {{ location_clause() }}
    as select {{ select_list | join(', ') }} from {{ relation }}
  {% endset %}
  {% do run_query(sql) %}
{% endmacro %}


{% macro sqlext__alter_relation_add_remove_columns(relation, add_columns, remove_columns) %}
  {% set add_columns = add_columns or [] %}
  {% if remove_columns %}
    {% set removed = remove_columns | map(attribute='name') | map('lower') | list %}
    {% set select_list = [] %}
    {% for column in adapter.get_columns_in_relation(relation) %}
      {% if column.name | lower not in removed %}
        {% do select_list.append(adapter.quote(column.name)) %}
      {% endif %}
    {% endfor %}
    {% for column in add_columns %}
      {% do select_list.append('cast(null as ' ~ column.data_type ~ ') as ' ~ adapter.quote(column.name)) %}
    {% endfor %}
    {% do sqlext_rewrite_table(relation, select_list) %}
  {% elif add_columns %}
    {% set sql -%}
      alter table {{ relation }} add columns (
        {%- for column in add_columns %}
          {{ adapter.quote(column.name) }} {{ column.data_type }}{{ ',' if not loop.last }}
        {%- endfor %}
      )
    {%- endset %}
    {% do run_query(sql) %}
  {% endif %}
{% endmacro %}


{% macro sqlext__alter_column_type(relation, column_name, new_column_type) %}
  {% set select_list = [] %}
  {% for column in adapter.get_columns_in_relation(relation) %}
    {% if column.name | lower == column_name | lower %}
      {% do select_list.append('cast(' ~ adapter.quote(column.name) ~ ' as ' ~ new_column_type ~ ') as ' ~ adapter.quote(column.name)) %}
    {% else %}
      {% do select_list.append(adapter.quote(column.name)) %}
    {% endif %}
  {% endfor %}
  {% do sqlext_rewrite_table(relation, select_list) %}
{% endmacro %}


{% macro sqlext__create_columns(relation, columns) %}
  {% do sqlext__alter_relation_add_remove_columns(relation, columns, none) %}
{% endmacro %}


{% macro sqlext__truncate_relation(relation) %}
  {% call statement('truncate_relation') -%}
    delete from {{ relation }}
  {%- endcall %}
{% endmacro %}


{#-- The relation's columns as Column objects (dbt-spark's macro returns describe's raw rows,
     which dbt's snapshot helpers read as columns) --#}
{% macro sqlext__get_columns_in_relation(relation) -%}
  {{ return(adapter.get_columns_in_relation(relation)) }}
{%- endmacro %}


{#-- persist_docs columns: one `alter table ... change column c comment '...'` per column, each a
     metadata-only commit of the Delta table (the comment lands in the schema field's metadata).
     A view's column comments are written by `create or replace view v (c comment '...')`, so
     there is nothing to alter on a view. --#}
{% macro sqlext__alter_column_comment(relation, column_dict) %}
  {% if relation.is_view or sqlext_file_format() != 'delta' %}
    {{ return(none) }}
  {% endif %}
  {% for column_name in column_dict %}
    {% set comment = column_dict[column_name]['description'] %}
    {% set comment_query %}
      alter table {{ relation }} change column
          {{ adapter.quote(column_name) if column_dict[column_name]['quote'] else column_name }}
          comment '{{ comment | replace('\\', '\\\\') | replace("'", "\\'") }}'
    {% endset %}
    {% do run_query(comment_query) %}
  {% endfor %}
{% endmacro %}


{#-- A Python model's code: the model's own code and dbt's helpers (compiled_code), then a call
     of model(dbt, session) whose DataFrame (pyspark, pandas or pandas-on-Spark) becomes a global
     temporary view (global: pandas-on-Spark builds its frames on the application's default
     session, not on the dbt connection's), committed by the SQL a SQL model of the same config
     runs: `create or replace table ... as select * from <view>` (temporary: the incremental
     run's `__dbt_tmp` view over it, which the strategy's one statement reads). dbt.ref and
     dbt.source read through sqlext.sql, so Delta tables are read at their current version. The
     adapter's submit_python_job runs it with `spark` bound to the dbt connection's session. --#}
{% macro sqlext_py_write_table(temporary, relation, compiled_code) %}
{%- set view = 'dbt_python_rows_' ~ (relation.identifier | replace('-', '_')) -%}
{%- set commit_sql = create_table_as(temporary, relation, 'select * from global_temp.' ~ view, 'sql') -%}
{{ compiled_code }}


# --- sqlext: run the model, commit what it returns --- #
def sqlext_materialize(spark):
    import pyspark.sql
    import sqlext

    dbt = dbtObj(lambda name: sqlext.sql(spark, "select * from " + name))
    df = model(dbt, spark)
    if not isinstance(df, pyspark.sql.DataFrame):
        if hasattr(df, "to_spark"):          # pandas-on-Spark
            df = df.to_spark()
        else:                                # pandas
            df = spark.createDataFrame(df)
    df.createOrReplaceGlobalTempView({{ tojson(view) }})
    sqlext.sql(spark, {{ tojson(commit_sql) }})
    {%- if not temporary %}
    spark.catalog.dropGlobalTempView({{ tojson(view) }})
    {%- endif %}


sqlext_materialize(spark)
{% endmacro %}


{#-- dbt-spark's name for it, for anything that calls py_write_table directly --#}
{% macro py_write_table(compiled_code, target_relation) %}
  {{ return(sqlext_py_write_table(False, target_relation, compiled_code)) }}
{% endmacro %}

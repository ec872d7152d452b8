{#-- Snapshots on sqlext: dbt-spark's snapshot with delta as the default file format, and a MERGE
     that names its insert columns (the staging view also has dbt_change_type / dbt_unique_key).
     Strategies timestamp and check, hard_deletes ignore / invalidate / new_record all come from
     dbt's staging query; each snapshot run is one MERGE commit. --#}

{% macro sqlext__snapshot_merge_sql(target, source, insert_cols) -%}
  {%- set columns = config.get("snapshot_table_column_names") or get_snapshot_table_column_names() -%}

  merge into {{ target }} as DBT_INTERNAL_DEST
  using {{ source }} as DBT_INTERNAL_SOURCE
  on DBT_INTERNAL_SOURCE.{{ columns.dbt_scd_id }} = DBT_INTERNAL_DEST.{{ columns.dbt_scd_id }}
  when matched
  {%- if config.get("dbt_valid_to_current") %}
    and (DBT_INTERNAL_DEST.{{ columns.dbt_valid_to }} = {{ config.get('dbt_valid_to_current') }}
         or DBT_INTERNAL_DEST.{{ columns.dbt_valid_to }} is null)
  {%- else %}
    and DBT_INTERNAL_DEST.{{ columns.dbt_valid_to }} is null
  {%- endif %}
    and DBT_INTERNAL_SOURCE.dbt_change_type in ('update', 'delete')
    then update set {{ columns.dbt_valid_to }} = DBT_INTERNAL_SOURCE.{{ columns.dbt_valid_to }}
  when not matched
    and DBT_INTERNAL_SOURCE.dbt_change_type = 'insert'
    then insert ({{ insert_cols | join(', ') }})
    values ({% for column in insert_cols -%}DBT_INTERNAL_SOURCE.{{ column }}{%- if not loop.last %}, {% endif -%}{%- endfor %})
{%- endmacro %}


{% materialization snapshot, adapter='sqlext' %}
  {%- set target_table = model.get('alias', model.get('name')) -%}
  {%- set strategy_name = config.get('strategy') -%}
  {%- set file_format = sqlext_file_format() -%}
  {%- set grant_config = config.get('grants') -%}

  {%- if file_format != 'delta' -%}
    {{ exceptions.raise_compiler_error("Invalid file format: " ~ file_format ~ "\n    Snapshots on sqlext are Delta tables: leave file_format unset or set it to 'delta'") }}
  {%- endif -%}

  {% set target_relation_exists, target_relation = get_or_create_relation(
          database=none, schema=model.schema, identifier=target_table, type='table') -%}

  {%- if target_relation_exists and not target_relation.is_delta -%}
    {{ exceptions.raise_compiler_error("The existing relation " ~ model.schema ~ "." ~ target_table ~ " is not a Delta table") }}
  {%- endif -%}

  {% if not adapter.check_schema_exists(model.database, model.schema) %}
    {% do create_schema(model.schema) %}
  {% endif %}

  {%- if not target_relation.is_table -%}
    {% do exceptions.relation_wrong_type(target_relation, 'table') %}
  {%- endif -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}

  {% set strategy_macro = strategy_dispatch(strategy_name) %}
  {% set strategy = strategy_macro(model, "snapshotted_data", "source_data", model['config'], target_relation_exists) %}

  {% if not target_relation_exists %}
    {% set build_sql = build_snapshot_table(strategy, model['compiled_code']) %}
    {% set final_sql = create_table_as(False, target_relation, build_sql) %}
  {% else %}
    {% set columns = config.get("snapshot_table_column_names") or get_snapshot_table_column_names() %}
    {{ adapter.valid_snapshot_target(target_relation, columns) }}
    {% set staging_table = spark_build_snapshot_staging_table(strategy, sql, target_relation) %}
    {% do adapter.expand_target_column_types(from_relation=staging_table, to_relation=target_relation) %}
    {% set missing_columns = adapter.get_missing_columns(staging_table, target_relation)
                             | rejectattr('name', 'equalto', 'dbt_change_type')
                             | rejectattr('name', 'equalto', 'DBT_CHANGE_TYPE')
                             | rejectattr('name', 'equalto', 'dbt_unique_key')
                             | rejectattr('name', 'equalto', 'DBT_UNIQUE_KEY')
                             | list %}
    {% do create_columns(target_relation, missing_columns) %}
    {% set source_columns = adapter.get_columns_in_relation(staging_table)
                            | rejectattr('name', 'equalto', 'dbt_change_type')
                            | rejectattr('name', 'equalto', 'DBT_CHANGE_TYPE')
                            | rejectattr('name', 'equalto', 'dbt_unique_key')
                            | rejectattr('name', 'equalto', 'DBT_UNIQUE_KEY')
                            | list %}
    {% set quoted_source_columns = [] %}
    {% for column in source_columns %}
      {% do quoted_source_columns.append(adapter.quote(column.name)) %}
    {% endfor %}
    {% set final_sql = snapshot_merge_sql(target=target_relation, source=staging_table,
                                          insert_cols=quoted_source_columns) %}
  {% endif %}

  {% call statement('main') %}
    {{ final_sql }}
  {% endcall %}

  {% set should_revoke = should_revoke(target_relation_exists, full_refresh_mode) %}
  {% do apply_grants(target_relation, grant_config, should_revoke) %}
  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {{ adapter.commit() }}

  {% if staging_table is defined %}
    {% do post_snapshot(staging_table) %}
  {% endif %}

  {{ run_hooks(post_hooks, inside_transaction=False) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

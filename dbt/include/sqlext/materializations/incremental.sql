{#-- Incremental models on sqlext. Every strategy is ONE statement, so ONE commit:
       append            insert into t select ...
       merge             merge into t using <new rows> on <unique_key null-safe> ...
       delete+insert     one MERGE: matched rows deleted, all new rows inserted (no gap visible)
       insert_overwrite  insert overwrite t [partition (...)] (dynamic partition overwrite)
       replace_where     insert into t replace where <incremental_predicates> select ...
       microbatch        insert into t replace where <event_time in the batch> select ...
     The new rows are a temporary view `<model>__dbt_tmp`; its query runs when the statement
     runs, on the tables' snapshots of that moment. --#}

{#-- the model's strategy: one of adapter.valid_incremental_strategies(), or a project's own
     get_incremental_<name>_sql macro (dbt-core's custom strategies) --#}
{% macro sqlext_incremental_strategy(file_format) %}
  {%- set strategy = config.get('incremental_strategy') or 'merge' -%}
  {%- set known = adapter.valid_incremental_strategies() -%}
  {%- if strategy not in known and ('get_incremental_' ~ strategy | replace('+', '_') ~ '_sql') not in context -%}
    {{ exceptions.raise_compiler_error("Invalid incremental strategy provided: " ~ strategy ~ "\n    Expected one of: " ~ known | join(', ')) }}
  {%- endif -%}
  {%- if strategy not in ['append', 'insert_overwrite'] and file_format != 'delta' -%}
    {{ exceptions.raise_compiler_error("Invalid incremental strategy provided: " ~ strategy ~ "\n    You can only choose this strategy when file_format is 'delta' (got '" ~ file_format ~ "')") }}
  {%- endif -%}
  {{ return(strategy) }}
{% endmacro %}


{% materialization incremental, adapter='sqlext', supported_languages=['sql', 'python'] -%}
  {%- set language = model['language'] -%}
  {%- set file_format = dbt_spark_validate_get_file_format(sqlext_file_format()) -%}
  {%- set strategy = sqlext_incremental_strategy(file_format) -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set unique_key = config.get('unique_key', none) -%}
  {%- set partition_by = config.get('partition_by', none) -%}
  {%- set on_schema_change = incremental_validate_on_schema_change(config.get('on_schema_change'), default='ignore') -%}
  {%- set incremental_predicates = config.get('predicates', none) or config.get('incremental_predicates', none) -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set existing_relation = load_relation(this) -%}
  {%- set tmp_relation = this.incorporate(path={"identifier": this.identifier ~ '__dbt_tmp'}).include(database=false, schema=false) -%}

  {{ run_hooks(pre_hooks) }}

  {%- if existing_relation is none -%}
    {%- call statement('main', language=language) -%}
      {{ create_table_as(False, target_relation, compiled_code, language) }}
    {%- endcall -%}
    {% do persist_constraints(target_relation, model) %}
  {%- elif existing_relation.is_view or should_full_refresh() -%}
    {% if not (existing_relation.is_table and existing_relation.is_delta and file_format == 'delta') %}
      {% do adapter.drop_relation(existing_relation) %}
    {% endif %}
    {%- call statement('main', language=language) -%}
      {{ create_table_as(False, target_relation, compiled_code, language) }}
    {%- endcall -%}
    {% do persist_constraints(target_relation, model) %}
  {%- else -%}
    {%- call statement('create_tmp_relation', language=language) -%}
      {{ create_table_as(True, tmp_relation, compiled_code, language) }}
    {%- endcall -%}
    {%- do process_schema_changes(on_schema_change, tmp_relation, existing_relation) -%}
    {%- do sqlext_warn_contract_drift(target_relation) -%}
    {%- if strategy == 'insert_overwrite' and partition_by -%}
      {%- call statement() -%}
        set spark.sql.sources.partitionOverwriteMode = DYNAMIC
      {%- endcall -%}
    {%- endif -%}
    {%- set strategy_sql_macro_func = adapter.get_incremental_strategy_macro(context, strategy) -%}
    {%- set strategy_arg_dict = ({
          'target_relation': target_relation,
          'temp_relation': tmp_relation,
          'unique_key': unique_key,
          'dest_columns': sqlext_shared_columns(tmp_relation, target_relation),
          'incremental_predicates': incremental_predicates}) -%}
    {%- call statement('main') -%}
      {{ strategy_sql_macro_func(strategy_arg_dict) }}
    {%- endcall -%}
    {%- call statement('drop_tmp_relation') -%}
      drop view if exists {{ tmp_relation }}
    {%- endcall -%}
  {%- endif -%}

  {% set should_revoke = should_revoke(existing_relation, full_refresh_mode) %}
  {% do apply_grants(target_relation, grant_config, should_revoke) %}
  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{%- endmaterialization %}

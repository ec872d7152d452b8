{#-- One macro per incremental strategy, as dbt-core lays them out: the materialization asks
     adapter.get_incremental_strategy_macro(context, strategy) for get_incremental_<strategy>_sql
     ('+' written '_'), which dbt-core dispatches to the sqlext__ macro below. Each takes dbt's
     arg_dict: target_relation, temp_relation (the new rows), unique_key, dest_columns (the
     target's columns that the new rows also have, so a column the new rows lack keeps its value
     on update or is NULL on insert, whatever on_schema_change did) and incremental_predicates.
     The strategies sqlext builds are the adapter's valid_incremental_strategies(). --#}

{#-- no incremental_strategy: merge, as on dbt-spark's Delta tables --#}
{% macro sqlext__get_incremental_default_sql(arg_dict) %}
  {{ return(get_incremental_merge_sql(arg_dict)) }}
{% endmacro %}


{% macro sqlext__get_incremental_append_sql(arg_dict) %}
  {{ return(sqlext_insert_into_sql(arg_dict['temp_relation'], arg_dict['target_relation'], arg_dict['dest_columns'])) }}
{% endmacro %}


{% macro sqlext__get_incremental_merge_sql(arg_dict) %}
  {{ return(get_merge_sql(arg_dict['target_relation'], arg_dict['temp_relation'], arg_dict['unique_key'], arg_dict['dest_columns'], arg_dict['incremental_predicates'])) }}
{% endmacro %}


{#-- delete+insert as ONE MERGE: the source is every new row (to insert) plus one row per key
     (to delete the target rows with that key), so the delete and the insert are one commit. The
     new rows are read once: the first row of each key comes out twice (explode). The source
     keeps its helper columns (dbt_sqlext_row, dbt_sqlext_action): the insert names its columns,
     so they are not written, and the new rows are not described again to drop them. --#}
{% macro sqlext__get_incremental_delete_insert_sql(arg_dict) %}
  {%- set source, target = arg_dict['temp_relation'], arg_dict['target_relation'] -%}
  {%- set keys = sqlext_key_list(arg_dict['unique_key']) -%}
  {%- if not keys -%}
    {{ return(sqlext_insert_into_sql(source, target, arg_dict['dest_columns'])) }}
  {%- endif -%}
  {%- set shared = arg_dict['dest_columns'] | map(attribute='quoted') | list -%}
  {%- set predicates = adapter.sqlext_qualify_predicates(arg_dict['incremental_predicates'] or [], 'DBT_INTERNAL_DEST') -%}
  {%- do predicates.insert(0, "DBT_INTERNAL_SOURCE.dbt_sqlext_action = 'delete'") -%}
  {%- for key in keys -%}
    {%- do predicates.append('DBT_INTERNAL_SOURCE.' ~ key ~ ' <=> DBT_INTERNAL_DEST.' ~ key) -%}
  {%- endfor -%}

  merge into {{ target }} as DBT_INTERNAL_DEST
  using (
    select *,
           explode(if(dbt_sqlext_row = 1, array('insert', 'delete'), array('insert'))) as dbt_sqlext_action
    from (
      select *, row_number() over (partition by {{ keys | join(', ') }} order by {{ keys | join(', ') }}) as dbt_sqlext_row
      from {{ source }}
    )
  ) as DBT_INTERNAL_SOURCE
  on {{ predicates | join('\n    and ') }}
  when matched then delete
  when not matched and DBT_INTERNAL_SOURCE.dbt_sqlext_action = 'insert' then insert ({{ shared | join(', ') }})
    values ({% for column in shared -%}DBT_INTERNAL_SOURCE.{{ column }}{%- if not loop.last %}, {% endif -%}{%- endfor %})
{% endmacro %}


{#-- insert overwrite: every target column from the new rows (dynamic partition overwrite when
     the model is partitioned; the materialization sets the mode) --#}
{% macro sqlext__get_incremental_insert_overwrite_sql(arg_dict) %}
  {%- set target = arg_dict['target_relation'] -%}
  {%- set columns = adapter.get_columns_in_relation(target) | map(attribute='quoted') | list -%}
  insert overwrite table {{ target }}
  {{ partition_cols(label="partition") }}
  select {{ columns | join(', ') }} from {{ arg_dict['temp_relation'] }}
{% endmacro %}


{#-- replace_where (Delta's INSERT ... REPLACE WHERE): the rows incremental_predicates match are
     replaced by the new rows; not a dbt-core strategy, so declared here as dbt-core declares its own --#}
{% macro get_incremental_replace_where_sql(arg_dict) %}
  {{ return(adapter.dispatch('get_incremental_replace_where_sql', 'dbt')(arg_dict)) }}
{% endmacro %}


{% macro sqlext__get_incremental_replace_where_sql(arg_dict) %}
  {%- if not arg_dict['incremental_predicates'] -%}
    {{ exceptions.raise_compiler_error("incremental_strategy 'replace_where' needs incremental_predicates: the rows they match are replaced by the new rows (model " ~ arg_dict['target_relation'] ~ ")") }}
  {%- endif -%}
  {{ return(sqlext_replace_where_sql(arg_dict['temp_relation'], arg_dict['target_relation'], arg_dict['dest_columns'], arg_dict['incremental_predicates'])) }}
{% endmacro %}


{#-- microbatch: replace_where on the batch's event_time window --#}
{% macro sqlext__get_incremental_microbatch_sql(arg_dict) %}
  {{ return(sqlext_replace_where_sql(arg_dict['temp_relation'], arg_dict['target_relation'], arg_dict['dest_columns'], sqlext_microbatch_predicates())) }}
{% endmacro %}


{#-- the target's columns (Column objects, in the target's order) that the source also has --#}
{% macro sqlext_shared_columns(source, target) %}
  {%- set source_names = adapter.get_columns_in_relation(source) | map(attribute='name') | map('lower') | list -%}
  {%- set shared = [] -%}
  {%- for column in adapter.get_columns_in_relation(target) -%}
    {%- if column.name | lower in source_names -%}
      {%- do shared.append(column) -%}
    {%- endif -%}
  {%- endfor -%}
  {{ return(shared) }}
{% endmacro %}


{% macro sqlext_key_list(unique_key) %}
  {%- if not unique_key -%}
    {{ return([]) }}
  {%- elif unique_key is string -%}
    {{ return([unique_key]) }}
  {%- else -%}
    {{ return(unique_key | unique | list) }}
  {%- endif -%}
{% endmacro %}


{% macro sqlext_insert_into_sql(source, target, dest_columns) %}
  {%- set columns = dest_columns | map(attribute='quoted') | list -%}
  insert into {{ target }} ({{ columns | join(', ') }})
  select {{ columns | join(', ') }} from {{ source }}
{% endmacro %}


{% macro sqlext_replace_where_sql(source, target, dest_columns, predicates) %}
  {%- set columns = dest_columns | map(attribute='quoted') | list -%}
  insert into {{ target }} replace where {{ predicates | join(' and ') }}
  select {{ columns | join(', ') }} from {{ source }}
{% endmacro %}


{#-- the batch's time range: event_time >= start and event_time < end --#}
{% macro sqlext_microbatch_predicates() %}
  {%- set event_time = config.get('event_time') -%}
  {%- if not event_time -%}
    {{ exceptions.raise_compiler_error("incremental_strategy 'microbatch' needs an `event_time` config (model " ~ this ~ ")") }}
  {%- endif -%}
  {%- set batch = model.get('batch') or {} -%}
  {%- set start = batch.get('event_time_start') or config.get('__dbt_internal_microbatch_event_time_start') -%}
  {%- set end = batch.get('event_time_end') or config.get('__dbt_internal_microbatch_event_time_end') -%}
  {%- if not start or not end -%}
    {{ exceptions.raise_compiler_error("model " ~ this ~ " uses incremental_strategy 'microbatch' but dbt passed no batch window") }}
  {%- endif -%}
  {%- set predicates = [
      event_time ~ " >= " ~ sqlext_timestamp_literal(start),
      event_time ~ " < " ~ sqlext_timestamp_literal(end)] -%}
  {{ return(predicates) }}
{% endmacro %}


{% macro sqlext_timestamp_literal(value) -%}
  {%- if value is string -%}
    TIMESTAMP '{{ value }}'
  {%- else -%}
    TIMESTAMP '{{ value.isoformat(sep=" ") }}'
  {%- endif -%}
{%- endmacro %}


{% macro sqlext__get_merge_sql(target, source, unique_key, dest_columns, incremental_predicates) %}
  {%- set keys = sqlext_key_list(unique_key) -%}
  {%- set predicates = adapter.sqlext_qualify_predicates(incremental_predicates or [], 'DBT_INTERNAL_DEST') -%}
  {%- for key in keys -%}
    {%- do predicates.append('DBT_INTERNAL_SOURCE.' ~ key ~ ' <=> DBT_INTERNAL_DEST.' ~ key) -%}
  {%- endfor -%}
  {%- if not keys -%}
    {%- do predicates.append('FALSE') -%}
  {%- endif -%}
  {%- set dest_columns = dest_columns if dest_columns is not none else sqlext_shared_columns(source, target) -%}
  {%- set shared = dest_columns | map(attribute='quoted') | list -%}
  {%- set update_columns = [] -%}
  {%- for column in get_merge_update_columns(config.get('merge_update_columns'), config.get('merge_exclude_columns'), dest_columns) -%}
    {#-- dbt-core hands merge_update_columns back as written: quote them as the other columns are --#}
    {%- do update_columns.append(column if column.startswith('`') else adapter.quote(column)) -%}
  {%- endfor -%}

  merge into {{ target }} as DBT_INTERNAL_DEST
  using {{ source }} as DBT_INTERNAL_SOURCE
  on {{ predicates | join('\n    and ') }}
  {%- if keys and update_columns %}
  when matched then update set
    {% for column in update_columns -%}
      DBT_INTERNAL_DEST.{{ column }} = DBT_INTERNAL_SOURCE.{{ column }}{%- if not loop.last %}, {% endif %}
    {% endfor -%}
  {%- endif %}
  when not matched then insert ({{ shared | join(', ') }})
    values ({% for column in shared -%}DBT_INTERNAL_SOURCE.{{ column }}{%- if not loop.last %}, {% endif -%}{%- endfor %})
{% endmacro %}


{#-- dbt-core's columns to update. dbt-spark's override answers none for "every column" (its MERGE
     writes `update set *`); sqlext's MERGE names the columns the new rows have, so it uses
     dbt-core's, which lists them. --#}
{% macro sqlext__get_merge_update_columns(merge_update_columns, merge_exclude_columns, dest_columns) %}
  {{ return(default__get_merge_update_columns(merge_update_columns, merge_exclude_columns, dest_columns)) }}
{% endmacro %}

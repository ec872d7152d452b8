{#-- The statement of each incremental strategy (see incremental.sql). Column lists are the
     target's columns that the new rows also have, so a column the new rows lack keeps its value
     (update) or is NULL (insert), whatever on_schema_change did. --#}

{% macro sqlext_get_incremental_sql(strategy, source, target, unique_key, incremental_predicates) %}
  {%- if strategy == 'append' -%}
    {{ sqlext_insert_into_sql(source, target) }}
  {%- elif strategy == 'merge' -%}
    {{ get_merge_sql(target, source, unique_key, dest_columns=none, incremental_predicates=incremental_predicates) }}
  {%- elif strategy == 'delete+insert' -%}
    {{ sqlext_delete_insert_sql(source, target, unique_key, incremental_predicates) }}
  {%- elif strategy == 'insert_overwrite' -%}
    {{ sqlext_insert_overwrite_sql(source, target) }}
  {%- elif strategy == 'replace_where' -%}
    {%- if not incremental_predicates -%}
      {{ exceptions.raise_compiler_error("incremental_strategy 'replace_where' needs incremental_predicates: the rows they match are replaced by the new rows (model " ~ target ~ ")") }}
    {%- endif -%}
    {{ sqlext_replace_where_sql(source, target, incremental_predicates) }}
  {%- elif strategy == 'microbatch' -%}
    {{ sqlext_replace_where_sql(source, target, sqlext_microbatch_predicates()) }}
  {%- endif -%}
{% endmacro %}


{#-- target columns the source also has, quoted, in the target's order --#}
{% macro sqlext_shared_columns(source, target) %}
  {%- set source_names = adapter.get_columns_in_relation(source) | map(attribute='name') | map('lower') | list -%}
  {%- set shared = [] -%}
  {%- for column in adapter.get_columns_in_relation(target) -%}
    {%- if column.name | lower in source_names -%}
      {%- do shared.append(adapter.quote(column.name)) -%}
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


{% macro sqlext_insert_into_sql(source, target) %}
  {%- set columns = sqlext_shared_columns(source, target) -%}
  insert into {{ target }} ({{ columns | join(', ') }})
  select {{ columns | join(', ') }} from {{ source }}
{% endmacro %}


{% macro sqlext_insert_overwrite_sql(source, target) %}
  {%- set columns = adapter.get_columns_in_relation(target) | map(attribute='quoted') | list -%}
  insert overwrite table {{ target }}
  {{ partition_cols(label="partition") }}
  select {{ columns | join(', ') }} from {{ source }}
{% endmacro %}


{% macro sqlext_replace_where_sql(source, target, predicates) %}
  {%- set columns = sqlext_shared_columns(source, target) -%}
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
  {%- set shared = sqlext_shared_columns(source, target) -%}
  {%- set merge_update_columns = config.get('merge_update_columns') -%}
  {%- set merge_exclude_columns = config.get('merge_exclude_columns') -%}
  {%- if merge_update_columns and merge_exclude_columns -%}
    {{ exceptions.raise_compiler_error('Model cannot specify merge_update_columns and merge_exclude_columns. Please update model to use only one config') }}
  {%- elif merge_update_columns -%}
    {%- set update_columns = [] -%}
    {%- for column in merge_update_columns -%}
      {%- do update_columns.append(adapter.quote(column)) -%}
    {%- endfor -%}
  {%- elif merge_exclude_columns -%}
    {%- set excluded = merge_exclude_columns | map('lower') | list -%}
    {%- set update_columns = [] -%}
    {%- for column in shared -%}
      {%- if column | replace('`', '') | lower not in excluded -%}
        {%- do update_columns.append(column) -%}
      {%- endif -%}
    {%- endfor -%}
  {%- else -%}
    {%- set update_columns = shared -%}
  {%- endif -%}

  {{ sql_header if sql_header is not none }}

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


{#-- delete+insert as ONE MERGE: the source is every new row (to insert) plus one row per key
     (to delete the target rows with that key), so the delete and the insert are one commit. --#}
{% macro sqlext_delete_insert_sql(source, target, unique_key, incremental_predicates) %}
  {%- set keys = sqlext_key_list(unique_key) -%}
  {%- if not keys -%}
    {{ return(sqlext_insert_into_sql(source, target)) }}
  {%- endif -%}
  {%- set shared = sqlext_shared_columns(source, target) -%}
  {%- set source_columns = adapter.get_columns_in_relation(source) | map(attribute='quoted') | list -%}
  {%- set predicates = adapter.sqlext_qualify_predicates(incremental_predicates or [], 'DBT_INTERNAL_DEST') -%}
  {%- do predicates.insert(0, "DBT_INTERNAL_SOURCE.dbt_sqlext_action = 'delete'") -%}
  {%- for key in keys -%}
    {%- do predicates.append('DBT_INTERNAL_SOURCE.' ~ key ~ ' <=> DBT_INTERNAL_DEST.' ~ key) -%}
  {%- endfor -%}

  merge into {{ target }} as DBT_INTERNAL_DEST
  using (
    select {{ source_columns | join(', ') }}, 'insert' as dbt_sqlext_action from {{ source }}
    union all
    select {{ source_columns | join(', ') }}, 'delete' as dbt_sqlext_action from (
      select *, row_number() over (partition by {{ keys | join(', ') }} order by {{ keys | join(', ') }}) as dbt_sqlext_row
      from {{ source }}
    ) where dbt_sqlext_row = 1
  ) as DBT_INTERNAL_SOURCE
  on {{ predicates | join('\n    and ') }}
  when matched then delete
  when not matched and DBT_INTERNAL_SOURCE.dbt_sqlext_action = 'insert' then insert ({{ shared | join(', ') }})
    values ({% for column in shared -%}DBT_INTERNAL_SOURCE.{{ column }}{%- if not loop.last %}, {% endif -%}{%- endfor %})
{% endmacro %}

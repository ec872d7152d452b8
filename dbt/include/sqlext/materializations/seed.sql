{#-- Seeds: the whole CSV is written in ONE commit, `create or replace table ... as select * from
     values ...`, so a seed's table is never seen empty or half loaded, and every run is a new
     version of the same table. Values are bound (cast(? as type)) and rendered as literals by the
     connection: NULL stays NULL, quotes and backslashes survive. Seeds larger than
     get_batch_size() rows are staged in temporary views first, then written by one statement. --#}

{% macro sqlext_seed_columns(model, agate_table) %}
  {%- set column_override = model['config'].get('column_types', {}) -%}
  {#-- quote_columns: false leaves names as written, as dbt-spark does (a malformed header is a
       syntax error, not a column named after the whole line) --#}
  {%- set quote_seed_column = model['config'].get('quote_columns', None) -%}
  {%- set columns = [] -%}
  {%- for col_name in agate_table.column_names -%}
    {%- set inferred_type = adapter.convert_type(agate_table, loop.index0) -%}
    {%- do columns.append({'name': col_name | string, 'type': column_override.get(col_name, inferred_type),
                            'quoted': adapter.quote_seed_column(col_name | string, quote_seed_column)}) -%}
  {%- endfor -%}
  {{ return(columns) }}
{% endmacro %}


{% macro sqlext_seed_values(columns, chunk) -%}
  select * from values
  {% for row in chunk -%}
    ({%- for column in columns -%}
      cast({{ get_binding_char() }} as {{ column.type }}){%- if not loop.last %}, {% endif -%}
    {%- endfor -%}){%- if not loop.last %},{% endif %}
  {% endfor -%}
  as dbt_seed({%- for column in columns -%}{{ column.quoted }}{%- if not loop.last %}, {% endif -%}{%- endfor -%})
{%- endmacro %}


{#-- Runs the statements that load a seed; returns the SQL to show as the seed's compiled code. --#}
{% macro sqlext_load_seed(model, agate_table, relation) %}
  {%- set columns = sqlext_seed_columns(model, agate_table) -%}
  {%- set create = 'create or replace table' if sqlext_file_format() in ['delta', 'iceberg'] else 'create table' -%}
  {%- set rows = agate_table.rows | list -%}

  {%- if rows | length == 0 -%}
    {% set sql %}
      {{ create }} {{ relation }} (
        {%- for column in columns -%}
          {{ column.quoted }} {{ column.type }}{%- if not loop.last %}, {% endif -%}
        {%- endfor -%}
      )
      {{ sqlext_table_clauses() }}
    {% endset %}
    {% do adapter.add_query(sql, abridge_sql_log=True) %}
    {{ return(sql) }}
  {%- endif -%}

  {%- set chunks = rows | batch(get_batch_size()) | list -%}
  {%- set shown = [] -%}
  {%- if chunks | length == 1 -%}
    {% set bindings = [] %}
    {% for row in rows %}{% do bindings.extend(row) %}{% endfor %}
    {% set sql %}
      {{ create }} {{ relation }}
      {{ sqlext_table_clauses() }}
      as {{ sqlext_seed_values(columns, rows) }}
    {% endset %}
    {% do adapter.add_query(sql, bindings=bindings, abridge_sql_log=True) %}
    {{ return(sql) }}
  {%- endif -%}

  {%- set staged = [] -%}
  {% for chunk in chunks %}
    {% set view = relation.identifier ~ '__dbt_seed_' ~ loop.index0 %}
    {% set bindings = [] %}
    {% for row in chunk %}{% do bindings.extend(row) %}{% endfor %}
    {% set sql %}
      create or replace temporary view {{ adapter.quote(view) }} as {{ sqlext_seed_values(columns, chunk) }}
    {% endset %}
    {% do adapter.add_query(sql, bindings=bindings, abridge_sql_log=True) %}
    {% do staged.append(adapter.quote(view)) %}
    {% if loop.first %}{% do shown.append(sql) %}{% endif %}
  {% endfor %}
  {% set sql %}
    {{ create }} {{ relation }}
    {{ sqlext_table_clauses() }}
    as {% for view in staged %}select * from {{ view }}{% if not loop.last %} union all {% endif %}{% endfor %}
  {% endset %}
  {% do adapter.add_query(sql, abridge_sql_log=True) %}
  {% for view in staged %}
    {% do adapter.add_query('drop view if exists ' ~ view, abridge_sql_log=True) %}
  {% endfor %}
  {{ return(shown[0] ~ ';\n' ~ sql) }}
{% endmacro %}


{% materialization seed, adapter='sqlext' %}

  {%- set identifier = model['alias'] -%}
  {%- set full_refresh_mode = (should_full_refresh()) -%}
  {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set agate_table = load_agate_table() -%}
  {%- do store_result('agate_table', response='OK', agate_table=agate_table) -%}

  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}

  {% if old_relation is not none and old_relation.is_view %}
    {{ exceptions.raise_compiler_error("Cannot seed to '{}', it is a view".format(old_relation.render())) }}
  {% endif %}
  {% if old_relation is not none and not (old_relation.is_delta and sqlext_file_format() == 'delta') %}
    {{ adapter.drop_relation(old_relation) }}
  {% endif %}

  {% set sql = sqlext_load_seed(model, agate_table, target_relation) %}
  {% set code = 'CREATE' if (full_refresh_mode or old_relation is none) else 'INSERT' %}
  {% set rows_affected = (agate_table.rows | length) %}
  {% call noop_statement('main', code ~ ' ' ~ rows_affected, code, rows_affected) %}
    {{ sql }}
  {% endcall %}

  {% set should_revoke = should_revoke(old_relation, full_refresh_mode) %}
  {% do apply_grants(target_relation, grant_config, should_revoke=should_revoke) %}
  {% do persist_docs(target_relation, model) %}

  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {{ adapter.commit() }}
  {{ run_hooks(post_hooks, inside_transaction=False) }}

  {{ return({'relations': [target_relation]}) }}

{% endmaterialization %}

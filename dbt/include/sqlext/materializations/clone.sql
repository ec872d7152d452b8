{#-- dbt clone: a table in the deferred state becomes a Delta shallow clone of it
     (`create or replace table ... shallow clone ...`: one commit, no data copied); anything else
     (a view, or a relation not in the database) becomes a view of it, as on dbt-spark. --#}

{% macro sqlext__can_clone_table() %}
  {{ return(True) }}
{% endmacro %}


{% macro sqlext__create_or_replace_clone(this_relation, defer_relation) %}
  create or replace table {{ this_relation }} shallow clone {{ defer_relation }}
{% endmacro %}


{%- materialization clone, adapter='sqlext' -%}
  {%- set relations = {'relations': []} -%}
  {%- if not defer_relation -%}
    {{ log("No relation found in state manifest for " ~ model.unique_id, info=True) }}
    {{ return(relations) }}
  {%- endif -%}

  {%- set existing_relation = load_cached_relation(this) -%}
  {%- if existing_relation and not flags.FULL_REFRESH -%}
    {{ log("Relation " ~ existing_relation ~ " already exists", info=True) }}
    {{ return(relations) }}
  {%- endif -%}

  {%- set source_relation = load_cached_relation(defer_relation) -%}
  {%- if sqlext_file_format() != 'delta' -%}
    {% do exceptions.raise_compiler_error("dbt clone of " ~ this ~ ": file_format " ~ sqlext_file_format()
         ~ " cannot be cloned; shallow clones are Delta tables (file_format: delta)") %}
  {%- endif -%}

  {%- if source_relation and source_relation.is_table and can_clone_table() -%}
    {%- set target_relation = this.incorporate(type='table') -%}
    {% if existing_relation is not none and not existing_relation.is_table %}
      {{ drop_relation_if_exists(existing_relation) }}
    {% endif %}
    {% call statement('main') %}
      {{ create_or_replace_clone(target_relation, defer_relation) }}
    {% endcall %}
    {% set should_revoke = should_revoke(existing_relation, full_refresh_mode=True) %}
    {% do apply_grants(target_relation, config.get('grants'), should_revoke=should_revoke) %}
    {% do persist_docs(target_relation, model) %}
    {{ return({'relations': [target_relation]}) }}
  {%- else -%}
    {%- set target_relation = this.incorporate(type='view') -%}
    {%- set names = ["materialization_view_sqlext", "materialization_view_spark",
                     "materialization_view_default"] -%}
    {%- set found = names | select("in", context) | list -%}
    {{ return(context[found[0]]()) }}
  {%- endif -%}
{%- endmaterialization -%}

{#-- Tables: `create or replace table ... using delta as select` commits a new version of the same
     Delta table (history kept; readers see the old version until the new one is committed). A
     view or a table of another format in the way is dropped first. --#}

{% materialization table, adapter='sqlext', supported_languages=['sql', 'python'] %}
  {%- set identifier = model['alias'] -%}
  {%- set grant_config = config.get('grants') -%}
  {%- set old_relation = adapter.get_relation(database=database, schema=schema, identifier=identifier) -%}
  {%- set target_relation = api.Relation.create(identifier=identifier, schema=schema,
                                                database=database, type='table') -%}

  {{ run_hooks(pre_hooks) }}

  {% if old_relation is not none %}
    {% set replace_in_place = old_relation.is_table and old_relation.is_delta
                              and sqlext_file_format() == 'delta' %}
    {% if not replace_in_place %}
      {{ adapter.drop_relation(old_relation) }}
    {% endif %}
  {% endif %}

  {%- set language = model['language'] -%}
  {%- call statement('main', language=language) -%}
    {{ create_table_as(False, target_relation, compiled_code, language) }}
  {%- endcall -%}

  {% set should_revoke = should_revoke(old_relation, full_refresh_mode=True) %}
  {% do apply_grants(target_relation, grant_config, should_revoke) %}
  {% do persist_docs(target_relation, model) %}
  {% do persist_constraints(target_relation, model) %}

  {{ run_hooks(post_hooks) }}

  {{ return({'relations': [target_relation]}) }}
{% endmaterialization %}

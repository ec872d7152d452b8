{#-- dbt's portable type names as dbt-spark gives them: type_int() is Spark's `int` (32 bits) and
     type_float() Spark's `float` (single precision). Seeds infer `bigint` and `double`, so a
     model that casts to type_int() compares with a seed column only where the seed says
     column_types: {col: int}, as on dbt-spark. --#}

{% macro sqlext__type_float() %}
  {{ return('float') }}
{% endmacro %}

{% macro sqlext__type_int() %}
  {{ return('int') }}
{% endmacro %}

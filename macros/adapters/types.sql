{#-- dbt's portable type names, as Spark types that agree with what seeds infer (bigint for
     integers, double for numbers with decimals): dbt's "float" is double precision, and a
     model's integer column compares with a seed's. --#}

{% macro sqlext__type_float() %}
  {{ return('double') }}
{% endmacro %}

{% macro sqlext__type_int() %}
  {{ return('bigint') }}
{% endmacro %}

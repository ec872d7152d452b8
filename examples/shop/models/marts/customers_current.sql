-- incremental merge: changed and new customers are merged on customer_id (one MERGE commit)
{{ config(materialized='incremental', incremental_strategy='merge', unique_key='customer_id') }}

select customer_id, name, email, country, updated_at
from {{ ref('stg_customers') }}
{% if is_incremental() %}
where updated_at > (select max(updated_at) from {{ this }})
{% endif %}

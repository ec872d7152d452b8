-- incremental delete+insert: every day with a changed order is recomputed; the old rows of those
-- days are deleted and the new ones inserted in ONE commit
{{ config(materialized='incremental', incremental_strategy='delete+insert', unique_key='order_date') }}

select
    order_date,
    count(*) as orders,
    sum(amount) as revenue,
    max(updated_at) as last_updated_at
from {{ ref('stg_orders') }}
{% if is_incremental() %}
where order_date in (
    select order_date from {{ ref('stg_orders') }}
    where updated_at > (select max(last_updated_at) from {{ this }})
)
{% endif %}
group by order_date

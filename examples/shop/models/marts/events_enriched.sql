-- microbatch: each day of events is one batch that replaces that day in the table
{{ config(
    materialized='incremental',
    incremental_strategy='microbatch',
    event_time='event_time',
    batch_size='day',
    begin='2024-01-01'
) }}

select e.event_id, e.event_time, e.event_type, e.customer_id, c.country
from {{ ref('stg_events') }} as e
left join {{ ref('stg_customers') }} as c on c.customer_id = e.customer_id

{{ config(event_time='event_time') }}

select event_id, customer_id, event_time, event_type
from {{ ref('events') }}

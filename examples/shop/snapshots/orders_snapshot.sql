{% snapshot orders_snapshot %}
{{ config(
    target_schema=target.schema,
    unique_key='order_id',
    strategy='timestamp',
    updated_at='updated_at',
    hard_deletes='new_record'
) }}

select * from {{ ref('stg_orders') }}

{% endsnapshot %}

-- hands_by_month: stored hands per calendar month of play (UTC), the denominator of the audit's findings by
-- month. A hand without a date is counted under a null month.
-- Check: the hands add up to warehouse_counts.hands.
WITH
source AS (
    -- played_at is UTC; strftime on a TIMESTAMPTZ alone would use the session's TimeZone (the machine's)
    SELECT strftime(timezone('UTC', played_at), '%Y-%m') AS month FROM hands
)

SELECT month, count(*)::BIGINT AS hands
FROM source
GROUP BY month
ORDER BY month NULLS LAST

-- hands_by_month: stored hands per calendar month of play (local time: the record's own offset, or --tz, through
-- pipeline/analytics/sql/local_time.sql's macro), the denominator of the audit's findings by
-- month. A hand without a date is counted under a null month.
-- Check: the hands add up to warehouse_counts.hands.
WITH
source AS (
    SELECT strftime(local_time(played_at, utc_offset), '%Y-%m') AS month FROM hands
)

SELECT month, count(*)::BIGINT AS hands
FROM source
GROUP BY month
ORDER BY month NULLS LAST

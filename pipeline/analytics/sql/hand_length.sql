-- hand_length: events per hand, over the replayed hands whose level records every event ($levels: the levels
-- of pipeline/analytics/levels.py's hand_length entry; a score sheet's events are its kongs and wins only).
-- A hand stored before levels were recorded counts as dealt (it carried a deal and every event).
-- Check: hands <= the replayed hands of outcomes.sql.
WITH
source AS (
    SELECT events FROM hands WHERE replayed AND list_contains($levels, coalesce(level, 'dealt'))
)

SELECT
    count(*) AS hands,
    coalesce(sum(events), 0)::BIGINT AS events_sum,
    coalesce(sum(events * events), 0)::BIGINT AS events_sq
FROM source

-- hands_by_level: the stored hands by level of record (schemas/XZLOG.md, levels), and how many of them were
-- replayed to the end (what the statistics count); $player: only the hands that player sat in (NULL: all).
-- A hand stored before levels were recorded counts as dealt (it carried a deal and every event).
-- Check: the stored hands add up to warehouse_counts.sql's hands (with $player NULL).
WITH
source AS (
    SELECT coalesce(level, 'dealt') AS level, replayed
    FROM hands
    WHERE $player IS NULL OR list_contains(players, $player)
)

SELECT level, count(*) AS stored, count(*) FILTER (WHERE replayed) AS replayed
FROM source
GROUP BY level
ORDER BY level

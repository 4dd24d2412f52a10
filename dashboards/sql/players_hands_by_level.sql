-- players_hands_by_level: every player's stored hands by level of record, and how many of them were replayed to
-- the end; the model hands_by_level for every player at once (the report's player pages, one query for all).
-- A hand stored before levels were recorded counts as dealt, as in hands_by_level.
-- Check: a player's rows add up to hands_by_level with $player set to that player.
WITH
source AS (
    SELECT coalesce(level, 'dealt') AS level, replayed, unnest(list_distinct(players)) AS player
    FROM hands
)

SELECT player, level, count(*) AS stored, count(*) FILTER (WHERE replayed) AS replayed
FROM source
GROUP BY player, level
ORDER BY player, level

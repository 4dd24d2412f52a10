-- pattern_frequency: wins carrying each scoring pattern (平胡 counts every win; 根 counts wins with a root),
-- replayed hands only. $player: one winner's wins only (NULL: every win).
-- Check: ping_hu equals the number of wins (the player's), except wins scored as a fixed 天胡/地胡.
WITH
source AS (
    SELECT w.patterns
    FROM wins AS w
    JOIN hands AS h ON h.hand_id = w.hand_id
    WHERE h.replayed AND ($player IS NULL OR w.player = $player)
),

unnested AS (
    SELECT unnest(patterns) AS p FROM source
)

SELECT p.id AS pattern, any_value(p.name_zh) AS name_zh, count(*) AS wins
FROM unnested
GROUP BY p.id
ORDER BY wins DESC, pattern

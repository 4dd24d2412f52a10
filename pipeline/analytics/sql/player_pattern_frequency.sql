-- player_pattern_frequency: one player's ($player) wins carrying each scoring pattern, replayed hands only;
-- the same definition as pattern_frequency, for one winner.
-- Check: ping_hu equals the player's wins, except wins scored as a fixed 天胡/地胡.
WITH
source AS (
    SELECT w.patterns
    FROM wins AS w
    JOIN hands AS h ON h.hand_id = w.hand_id
    WHERE h.replayed AND w.player = $player
),

unnested AS (
    SELECT unnest(patterns) AS p FROM source
)

SELECT p.id AS pattern, any_value(p.name_zh) AS name_zh, count(*) AS wins
FROM unnested
GROUP BY p.id
ORDER BY wins DESC, pattern

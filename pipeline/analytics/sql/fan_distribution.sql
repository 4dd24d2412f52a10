-- fan_distribution: wins by total fan (computed by the engine, before the cap), replayed hands only, in the
-- Chinese count (a plain hand is 1 fan): a hand of a profile counting it 0 (fan_base = 0, sbr) is shifted
-- by one, so that one warehouse's rules share one scale. $player: one winner's wins only (NULL: every win).
-- Check: the counts sum to the number of wins in replayed hands (the player's wins in player_base).
WITH
source AS (
    SELECT w.fan + 1 - coalesce(h.fan_base, 1) AS fan
    FROM wins AS w
    JOIN hands AS h ON h.hand_id = w.hand_id
    WHERE h.replayed AND ($player IS NULL OR w.player = $player)
)

SELECT fan, count(*) AS wins
FROM source
GROUP BY fan
ORDER BY fan

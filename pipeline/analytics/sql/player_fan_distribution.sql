-- player_fan_distribution: one player's ($player) wins by total fan (engine, before the cap), replayed hands
-- only, in the Chinese count (plain hand 1 fan); the same definition as fan_distribution, for one winner.
-- Check: the counts add up to the player's wins in player_base.
WITH
source AS (
    SELECT w.fan + 1 - coalesce(h.fan_base, 1) AS fan
    FROM wins AS w
    JOIN hands AS h ON h.hand_id = w.hand_id
    WHERE h.replayed AND w.player = $player
)

SELECT fan, count(*) AS wins
FROM source
GROUP BY fan
ORDER BY fan

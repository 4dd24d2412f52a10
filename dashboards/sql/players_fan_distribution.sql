-- players_fan_distribution: every player's wins by total fan (engine, before the cap), replayed hands only, in
-- the Chinese count (plain hand 1 fan); player_fan_distribution for every player at once.
-- Check: a player's rows are player_fan_distribution's for that player.
WITH
source AS (
    SELECT w.player, w.fan + 1 - coalesce(h.fan_base, 1) AS fan
    FROM wins AS w
    JOIN hands AS h ON h.hand_id = w.hand_id
    WHERE h.replayed
)

SELECT player, fan, count(*) AS wins
FROM source
GROUP BY player, fan
ORDER BY player, fan

-- players_fan_distribution: every player's wins by total fan (engine, before the cap), replayed hands only, in
-- the Chinese count (plain hand 1 fan); fan_distribution's $player for every player at once.
-- Check: a player's rows are fan_distribution's with $player = that player.
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

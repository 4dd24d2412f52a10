-- player_series_sizes: the rows player_rolling.sql gives each player with $most NULL (their replayed hands), in
-- its order of players: what the report's player pages cut into batches of players read at a time
-- (dashboards/player.py).
-- Check: sum(hands) = the rows of player_rolling.sql with $players and $most NULL.
SELECT player, count(*)::BIGINT AS hands
FROM player_hands
WHERE replayed
GROUP BY player
ORDER BY player

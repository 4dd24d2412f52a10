-- player_rolling: the hands played to the end by the players of the list $players (NULL: every player; the
-- report's player pages read a batch of players at a time, player_series_sizes.sql), player by player in the order
-- they were played (by played_at; hands without a time last; then session, hand number and hand_id), each with
-- whether the player won and whether they dealt in (at least one win on their discard or robbed kong), and the
-- counts over their last $window hands (fewer at the start: the hands so far): the rolling rates' rows
-- (dashboards/player.py adds the rates and their Wilson bands). $most (NULL: every row): only the rows a chart of
-- at most $most points draws, as pipeline/report/svg.py thinned picks them (all of a player's rows up to $most,
-- else every k-th from the first, the first full window's and the last; k = ceil(hands / $most)), so that a
-- player of 800,000 hands gives the report about 400 rows, the window worked out here (spilling past the bound).
-- played_local: the hand's local wall time (local_time.sql); played_from, played_to: the earliest and latest of
-- the player's; hands: the player's rows with $most NULL. Every level of record counts (claims).
-- Check: with $most NULL one row per replayed player_hands row of each player in $players; on each player's last
-- row with $window >= hands, wins = player_base.wins and deal_in_hands = player_base.deal_in_hands.
WITH series AS (  -- source: the players' replayed hands, in order
    SELECT
        ph.player,
        ph.hand_id,
        local_time(h.played_at, h.utc_offset) AS played_local,
        ph.won,
        ph.deal_ins > 0 AS dealt_in,
        row_number() OVER w AS n,
        count(*) OVER (PARTITION BY ph.player) AS hands,
        min(local_time(h.played_at, h.utc_offset)) OVER (PARTITION BY ph.player) AS played_from,
        max(local_time(h.played_at, h.utc_offset)) OVER (PARTITION BY ph.player) AS played_to,
        sum(ph.won::BIGINT) OVER (w ROWS BETWEEN $window - 1 PRECEDING AND CURRENT ROW)::BIGINT AS wins,
        sum((ph.deal_ins > 0)::BIGINT) OVER (w ROWS BETWEEN $window - 1 PRECEDING AND CURRENT ROW)::BIGINT
            AS deal_in_hands
    FROM player_hands AS ph
    JOIN hands AS h ON h.hand_id = ph.hand_id
    WHERE ($players IS NULL OR list_contains($players, ph.player)) AND ph.replayed
    WINDOW w AS (
        PARTITION BY ph.player
        ORDER BY h.played_at NULLS LAST, h.session_id NULLS LAST, h.hand_no NULLS LAST, ph.hand_id
    )
)

SELECT  -- final
    player, n, hand_id, played_local, won, dealt_in, least(n, $window)::BIGINT AS "window", wins, deal_in_hands,
    hands, played_from, played_to
FROM series
WHERE $most IS NULL OR hands <= $most OR (n - 1) % ((hands + $most - 1) // $most) = 0 OR n = hands OR n = $window
ORDER BY player, n

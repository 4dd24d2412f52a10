-- player_hand_series: the hands played to the end by the players of the list $players (NULL: every player; the
-- report's player pages read a batch of players at a time, player_series_sizes.sql), player by player in the order they were played (by played_at; hands without a time last; then
-- session, hand number and hand_id), with whether they won and
-- whether they dealt in (at least one win on their discard or robbed kong): the rolling rates' rows.
-- played_local: the hand's local wall time (local_time.sql). Every level of record counts (claims).
-- Check: one row per replayed player_hands row of each player in $players; sum(won) = player_base.wins,
-- sum(dealt_in) = player_base.deal_in_hands.
SELECT
    ph.player,
    ph.hand_id,
    local_time(h.played_at, h.utc_offset) AS played_local,
    ph.won,
    ph.deal_ins > 0 AS dealt_in
FROM player_hands AS ph
JOIN hands AS h ON h.hand_id = ph.hand_id
WHERE ($players IS NULL OR list_contains($players, ph.player)) AND ph.replayed
ORDER BY ph.player, h.played_at NULLS LAST, h.session_id NULLS LAST, h.hand_no NULLS LAST, ph.hand_id

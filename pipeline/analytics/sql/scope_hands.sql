-- scope_hands: the hands an analysis covers (pipeline/analytics/scope.py), from the whole warehouse's hands
-- (run before the views are filtered); every table's view then keeps the rows of these hands.
-- Parameters: $table (hands.table_id), $player (the hands that player sat in), $profile (hands.profile), each
-- NULL for any; $since_at / $until_at (UTC moments: a bound given with its offset) and $since_local /
-- $until_local (local wall times: a bound given as a date or a time without offset, compared with each hand's
-- local time, local_time.sql), NULL for none. Since is inclusive, until exclusive (a date's until is the next
-- midnight). A hand without played_at is outside any time bound.
-- Check: a subset of hands; every filter NULL gives every hand.
SELECT hand_id
FROM hands
WHERE ($table IS NULL OR table_id = $table)
    AND ($player IS NULL OR list_contains(players, $player))
    AND ($profile IS NULL OR profile = $profile)
    AND ($since_at IS NULL OR played_at >= $since_at)
    AND ($until_at IS NULL OR played_at < $until_at)
    AND ($since_local IS NULL OR local_time(played_at, utc_offset) >= $since_local)
    AND ($until_local IS NULL OR local_time(played_at, utc_offset) < $until_local)

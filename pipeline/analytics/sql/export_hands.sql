-- export_hands: the stored hands to write back out (xuezhan export --warehouse), with where each came from: the
-- input file and line ingest read it at and the sha256 of that line, so the record can be read back and shown
-- to be the one stored. By source file (its path), then line: a file's hands in its order, a session's together.
-- Parameters: $player (only the hands that player sat in; NULL: all), $since (only hands played at or after
-- this time; NULL: all, hands with no time included), $hand_id (only this hand; NULL: all).
-- Check: one row per stored hand that matches.
SELECT hand_id, source_file, source_line, record_sha256, level
FROM hands
WHERE ($player IS NULL OR list_contains(players, $player))
    AND ($since IS NULL OR played_at >= $since)
    AND ($hand_id IS NULL OR hand_id = $hand_id)
ORDER BY source_file, source_line, hand_id

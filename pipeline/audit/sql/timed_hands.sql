-- timed_hands: the stored hands that carry decision times (an event with ms), with where each came from (as
-- export_hands: the input file and line, the sha256 of that line, the level), so that the think-time screen
-- (pipeline/audit/think.py) reads their records back. $skip_version: leave out the hands a review pass stored at
-- that version (a decision_tallies row: their decision_times are read instead, think.stored_times); $only_version:
-- only those (NULL: no condition). By source file, then line.
-- Check: one row per stored hand with at least one event whose ms is not null (and reviewed, or not, as asked).
SELECT hand_id, source_file, source_line, record_sha256, level
FROM hands
WHERE
    hand_id IN (SELECT DISTINCT hand_id FROM events WHERE ms IS NOT NULL)
    AND ($skip_version IS NULL OR hand_id NOT IN (SELECT t.hand_id FROM decision_tallies AS t WHERE t.version = $skip_version))
    AND ($only_version IS NULL OR hand_id IN (SELECT t.hand_id FROM decision_tallies AS t WHERE t.version = $only_version))
ORDER BY source_file, source_line, hand_id

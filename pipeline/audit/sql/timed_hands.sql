-- timed_hands: the stored hands that carry decision times (an event with ms), with where each came from (as
-- export_hands: the input file and line, the sha256 of that line, the level), so that the think-time screen
-- (pipeline/audit/think.py) reads their records back. By source file, then line.
-- Check: one row per stored hand with at least one event whose ms is not null.
SELECT hand_id, source_file, source_line, record_sha256, level
FROM hands
WHERE hand_id IN (SELECT DISTINCT hand_id FROM events WHERE ms IS NOT NULL)
ORDER BY source_file, source_line, hand_id

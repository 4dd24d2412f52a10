-- review_pending: the stored hands whose decisions can be reviewed (levels full, dealt and observer, as
-- decision_hands.sql) that decision_tallies holds no row of review version $version for: what `xuezhan review`
-- reviews next (pipeline/audit/tallies.py). With where each came from (as export_hands: the input file and line,
-- the sha256 of that line, the level), by source file, then line, so that the records are read back file by file.
-- Check: a hand once reviewed at $version is never pending again; a hand reviewed at another version is.
SELECT h.hand_id, h.source_file, h.source_line, h.record_sha256, h.level
FROM hands AS h
WHERE
    coalesce(h.level, 'dealt') IN ('full', 'dealt', 'observer')  -- no level kept (an older warehouse): dealt
    AND h.hand_id NOT IN (SELECT t.hand_id FROM decision_tallies AS t WHERE t.version = $version)
ORDER BY h.source_file, h.source_line, h.hand_id

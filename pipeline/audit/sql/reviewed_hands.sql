-- reviewed_hands: of the hands in _review_ids (a registered table of hand ids), those the review pass stored at
-- version $version (a decision_tallies row, written in the same batch as their decision_cells rows): what
-- `xuezhan assist` reads back instead of reviewing (pipeline/audit/tallies.py stored_hands).
-- Check: every hand returned is in _review_ids, once.
SELECT DISTINCT t.hand_id
FROM decision_tallies AS t
SEMI JOIN _review_ids AS s ON t.hand_id = s.hand_id
WHERE t.version = $version

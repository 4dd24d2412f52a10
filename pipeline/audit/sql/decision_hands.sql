-- decision_hands: the stored hands whose decisions can be reviewed (levels full, dealt and observer: the tiles of
-- the deciding seats are known; an observer record's own seat only), with where each came from (as
-- export_hands: the input file and line, the sha256 of that line, the level), so that the engine-assistance
-- screen (pipeline/audit/decisions.py) reads their records back. $per_player: only the hands among each
-- player's $per_player newest (by played_at, then hand_id; a hand kept for one player brings its other seats'
-- decisions too); NULL: every hand. $skip_version: leave out the hands a review pass stored at that version
-- (a decision_tallies row: `xuezhan assist` reads their counts instead, assist.stored_room); $only_version:
-- only those (NULL: no condition). By source file, then line.
-- Check: one row per stored hand of those levels that is among some player's $per_player newest (and reviewed,
-- or not, as asked).
WITH
reviewable AS (
    SELECT hand_id, source_file, source_line, record_sha256, level, played_at
    FROM hands
    WHERE coalesce(level, 'dealt') IN ('full', 'dealt', 'observer')  -- no level kept (an older warehouse): dealt
),
newest AS (
    SELECT DISTINCT ph.hand_id
    FROM (
        SELECT
            p.hand_id,
            row_number() OVER (PARTITION BY p.player ORDER BY r.played_at DESC NULLS LAST, p.hand_id DESC) AS k
        FROM player_hands AS p
        JOIN reviewable AS r USING (hand_id)
    ) AS ph
    WHERE ph.k <= $per_player
)
SELECT hand_id, source_file, source_line, record_sha256, level
FROM reviewable
WHERE
    ($per_player IS NULL OR hand_id IN (SELECT hand_id FROM newest))
    AND ($skip_version IS NULL OR hand_id NOT IN (SELECT t.hand_id FROM decision_tallies AS t WHERE t.version = $skip_version))
    AND ($only_version IS NULL OR hand_id IN (SELECT t.hand_id FROM decision_tallies AS t WHERE t.version = $only_version))
ORDER BY source_file, source_line, hand_id

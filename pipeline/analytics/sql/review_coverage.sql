-- review_coverage: how much of what `xuezhan review` can review is reviewed (stats' `review`): the hands replayed
-- to the end whose tiles some seat's record shows (levels full, dealt, observer), those with decision_tallies rows
-- of review version $version, and those with rows of another version only (reviewed by an older pass: not read).
-- Check: reviewable >= reviewed + other_version.
WITH
reviewable AS (
    SELECT hand_id FROM hands WHERE replayed AND coalesce(level, 'dealt') IN ('full', 'dealt', 'observer')
),
tallied AS (
    SELECT hand_id, bool_or(version = $version) AS current
    FROM decision_tallies
    GROUP BY hand_id
)
SELECT
    count(*) AS reviewable,
    count(*) FILTER (WHERE t.current) AS reviewed,
    count(*) FILTER (WHERE NOT t.current) AS other_version
FROM reviewable AS r
LEFT JOIN tallied AS t USING (hand_id)

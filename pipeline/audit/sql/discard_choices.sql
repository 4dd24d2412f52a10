-- discard_choices: per player, the discards whose choice the replay can judge, and how many of them were
-- dangerous by choice: a tile an opponent still in could win on, thrown while the player held a tile nobody
-- could win on that left its own hand as close to ready (events.safe_alternative). Only hands whose every
-- tile is known (levels full and dealt): there the replay knows the discarder's hand and every opponent's.
-- A player who sees the other hands never needs to throw such a tile; a player who cannot, does now and then.
-- Over the hands whose hand_id lies in [$lo, $hi] ($lo NULL: every hand): every column is a sum over hands
-- (a hand is counted in one run only), so pipeline/audit/information.py sums one run of
-- pipeline/analytics/runs.py at a time and its memory is one run's, not the warehouse's.
-- Run by DuckDB, or by Spark SQL with `--engine spark` (pipeline/analytics/spark.py) over every hand: written in
-- the SQL both read alike (CAST, not ::).
WITH
judged AS (
    SELECT e.player, e.hand_id, coalesce(e.safe_alternative, false) AS by_choice
    FROM events AS e
    JOIN hands AS h ON h.hand_id = e.hand_id
    WHERE
        e.t = 'discard' AND e.replayed AND h.level IN ('full', 'dealt') AND e.player IS NOT NULL
        AND ($lo IS NULL OR e.hand_id BETWEEN $lo AND $hi)
)

SELECT
    player,
    CAST(count(DISTINCT hand_id) AS BIGINT) AS hands,
    CAST(count(*) AS BIGINT) AS discards,
    CAST(count(*) FILTER (WHERE by_choice) AS BIGINT) AS dangerous_by_choice
FROM judged
GROUP BY player
ORDER BY player

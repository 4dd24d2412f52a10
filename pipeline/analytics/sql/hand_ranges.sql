-- hand_ranges: the hands ($replayed: the replayed hands only) cut into runs of $size consecutive hand ids (the
-- last run shorter), each as the range [lo, hi] of its ids: the units a figure over many hands is read or summed
-- in, a run at a time, so that its memory is one run's. Only where the tables are not all in one order
-- (pipeline/analytics/runs.py reads the runs in file order, every table once, and falls back on these): a range
-- reads every row group whose ids overlap it, and ids interleave in the files (the whole warehouse's, per run).
-- Check: the runs' hands add up to the hands, and their ranges do not overlap.
WITH
ids AS (
    SELECT DISTINCT hand_id FROM hands WHERE replayed OR NOT $replayed
),

numbered AS (
    SELECT hand_id, (row_number() OVER (ORDER BY hand_id) - 1) // $size AS run FROM ids
)

SELECT run, min(hand_id) AS lo, max(hand_id) AS hi, count(*)::BIGINT AS hands
FROM numbered
GROUP BY run
ORDER BY run

-- hand_ranges: the hands cut into runs of $size consecutive hand ids (the last run shorter), each as the range
-- [lo, hi] of its ids: the units an additive figure over many hands is summed from, a run at a time, so that
-- its memory is one run's (head_to_head.sql at 200,000 hands held 0.9 GB in one query).
-- Check: the runs' hands add up to the hands, and their ranges do not overlap.
WITH
numbered AS (
    SELECT hand_id, (row_number() OVER (ORDER BY hand_id) - 1) // $size AS run FROM hands
)

SELECT run, min(hand_id) AS lo, max(hand_id) AS hi, count(*)::BIGINT AS hands
FROM numbered
GROUP BY run
ORDER BY run

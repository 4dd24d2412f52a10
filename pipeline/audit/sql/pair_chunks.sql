-- pair_chunks: the replayed hands cut into runs of $size consecutive hand ids (the last run shorter), each as
-- the range [lo, hi] of its ids: the units the collusion screen reads the warehouse in (pair_macros.sql).
-- Ingest writes hands in input order, so a run of ids usually lies in a few Parquet files.
-- Check: the runs' hands add up to the replayed hands, and their ranges do not overlap.
WITH
ids AS (
    SELECT DISTINCT hand_id FROM hands WHERE replayed
),

numbered AS (
    SELECT hand_id, (row_number() OVER (ORDER BY hand_id) - 1) // $size AS chunk FROM ids
)

SELECT chunk, min(hand_id) AS lo, max(hand_id) AS hi, count(*)::BIGINT AS hands
FROM numbered
GROUP BY chunk
ORDER BY chunk

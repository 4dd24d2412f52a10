-- deal_groups: the dealt hands of every group the stacked-deal screen tests (pipeline/audit/deals.py), counted
-- by table shape: per group, per number of suits in play and deal size (13, the dealer 14), the hands and the
-- sum of their starting shanten (player_hands.deal_shanten) and of their tiles outside the shortest suit.
-- Groups: each player; each seat of each table (a rigged automatic table favours a place, whoever sits there);
-- each table; each session. Only hands whose every hand is known (levels full and dealt: deal_shanten is null
-- elsewhere) and whose deal replayed. Over the hands whose hand_id lies in [$lo, $hi] ($lo NULL: every hand):
-- every column is a sum over hands, so pipeline/audit/deals.py sums one run of pipeline/analytics/runs.py at a
-- time (its memory one run's, not a hash table of every hand) and adds the runs' rows up.
-- Run by DuckDB, or by Spark SQL with `--engine spark` (pipeline/analytics/spark.py): written in the SQL both read
-- alike (CAST, not ::; a string cast AS STRING; NULLS LAST where a key can be null).
WITH
dealt AS (
    SELECT
        ph.player,
        ph.seat,
        h.table_id,
        h.session_id,
        CAST(length(h.suits) AS INTEGER) AS suits,
        CASE WHEN ph.dealer THEN 14 ELSE 13 END AS size,
        CAST(ph.deal_shanten AS INTEGER) AS shanten,
        CAST(ph.deal_suited AS INTEGER) AS suited
    FROM player_hands AS ph
    JOIN hands AS h ON h.hand_id = ph.hand_id
    WHERE ph.deal_shanten IS NOT NULL AND h.level IN ('full', 'dealt') AND ($lo IS NULL OR ph.hand_id BETWEEN $lo AND $hi)
),

grouped AS (
    SELECT 'player' AS kind, player AS grp, suits, size, shanten, suited FROM dealt
    UNION ALL
    SELECT 'seat', table_id || ' seat ' || CAST(seat AS STRING), suits, size, shanten, suited
    FROM dealt WHERE table_id IS NOT NULL
    UNION ALL
    SELECT 'table', table_id, suits, size, shanten, suited FROM dealt WHERE table_id IS NOT NULL
    UNION ALL
    SELECT 'session', session_id, suits, size, shanten, suited FROM dealt WHERE session_id IS NOT NULL
)

SELECT
    kind,
    grp,
    suits,
    size,
    CAST(count(*) AS BIGINT) AS hands,
    CAST(sum(shanten) AS BIGINT) AS shanten,
    CAST(coalesce(sum(suited), 0) AS BIGINT) AS suited,
    CAST(count(suited) AS BIGINT) AS suited_hands
FROM grouped
GROUP BY kind, grp, suits, size
ORDER BY kind, grp NULLS LAST, suits NULLS LAST, size

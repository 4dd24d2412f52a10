-- pair_evidence: hands a person can replay to judge each pair of ($a[k], $b[k]): wins and calls one made on the
-- other's tile while both were in, biggest win first, up to $limit a pair. Every pair asked for in one reading
-- of the events (a flagged pair's or a reported team's: the cost does not grow with how many were found).
-- The rank's keys are columns too (won, points), so that the best of every run of hands, merged and cut again,
-- are the best of all (pipeline/audit/collusion.py: pairs_evidence reads it a run of hands at a time).
-- Parameters: $a, $b (lists of player ids, the pairs position by position), $limit.
WITH
asked AS (  -- the pairs, each as its two names in order
    SELECT DISTINCT least(a, b) AS lo, greatest(a, b) AS hi
    FROM (SELECT unnest($a::VARCHAR[]) AS a, unnest($b::VARCHAR[]) AS b)
),

taken AS (  -- source: wins, pongs and direct kongs with a supplying seat
    SELECT e.hand_id, e.idx, e.t, e.player AS taker, h.players[e.source + 1] AS giver, e.tile
    FROM events AS e
    JOIN hands AS h ON h.hand_id = e.hand_id
    WHERE h.replayed AND e.source IS NOT NULL AND e.t IN ('hu', 'pong', 'kong')
),

between_pair AS (
    SELECT t.*, q.lo, q.hi, w.points, w.fan
    FROM taken AS t
    JOIN asked AS q ON q.lo = least(t.taker, t.giver) AND q.hi = greatest(t.taker, t.giver)
    LEFT JOIN wins AS w ON w.hand_id = t.hand_id AND w.event = t.idx
),

ranked AS (
    SELECT
        *,
        row_number() OVER (
            PARTITION BY lo, hi ORDER BY (t = 'hu') DESC, coalesce(points, 0) DESC, hand_id, idx
        ) AS k
    FROM between_pair
)

SELECT
    lo,
    hi,
    hand_id,
    idx AS event,
    t = 'hu' AS won,
    coalesce(points, 0) AS points,
    CASE t
        WHEN 'hu' THEN taker || ' won ' || fan || ' fan (' || points || ' points) on ' || giver || '''s ' || tile
        ELSE taker || ' ' || t || 'ed ' || giver || '''s ' || tile
    END AS why
FROM ranked
WHERE k <= $limit
ORDER BY lo, hi, k

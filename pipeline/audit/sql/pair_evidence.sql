-- pair_evidence: hands a person can replay to judge a pair ($a, $b): wins and calls one made on the other's
-- tile while both were in, biggest win first. Parameters: $a, $b (player ids), $limit.
WITH
taken AS (  -- source: wins, pongs and direct kongs with a supplying seat
    SELECT e.hand_id, e.idx, e.t, e.player AS taker, h.players[e.source + 1] AS giver, e.tile
    FROM events AS e
    JOIN hands AS h ON h.hand_id = e.hand_id
    WHERE h.replayed AND e.source IS NOT NULL AND e.t IN ('hu', 'pong', 'kong')
),

between_pair AS (
    SELECT t.*, w.points, w.fan
    FROM taken AS t
    LEFT JOIN wins AS w ON w.hand_id = t.hand_id AND w.event = t.idx
    WHERE (t.taker = $a AND t.giver = $b) OR (t.taker = $b AND t.giver = $a)
)

SELECT
    hand_id,
    idx AS event,
    CASE t
        WHEN 'hu' THEN taker || ' won ' || fan || ' fan (' || points || ' points) on ' || giver || '''s ' || tile
        ELSE taker || ' ' || t || 'ed ' || giver || '''s ' || tile
    END AS why
FROM between_pair
ORDER BY (t = 'hu') DESC, coalesce(points, 0) DESC, hand_id, idx
LIMIT $limit

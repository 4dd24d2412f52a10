-- info_candidates: a player's hands to look in for discards that dodged a win (the information-cheat screen's
-- evidence, pipeline/audit/information.py dodges): hands whose every tile is known (levels full and dealt),
-- ranked by the player's safe discards (no opponent could win on them) made after the hand's first discard
-- somebody could win on (from then on somebody was ready: a dangerous tile could be held). The replay then
-- decides which of those discards held a dangerous tile that was as good.
WITH
mine AS (
    SELECT e.hand_id, e.idx
    FROM events AS e
    JOIN hands AS h ON h.hand_id = e.hand_id
    WHERE
        e.t = 'discard' AND e.replayed AND h.level IN ('full', 'dealt') AND e.player = $player
        AND coalesce(len(e.could_win), 0) = 0
),

waiting AS (
    SELECT e.hand_id, min(e.idx) AS first_wait
    FROM events AS e
    WHERE e.t = 'discard' AND coalesce(len(e.could_win), 0) > 0 AND e.hand_id IN (SELECT m.hand_id FROM mine AS m)
    GROUP BY e.hand_id
)

SELECT m.hand_id, count(*)::BIGINT AS safe_discards
FROM mine AS m
JOIN waiting AS w ON w.hand_id = m.hand_id
WHERE m.idx > w.first_wait
GROUP BY m.hand_id
ORDER BY safe_discards DESC, m.hand_id
LIMIT $limit

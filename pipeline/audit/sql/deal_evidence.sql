-- deal_evidence: the best-dealt hands of the flagged groups of one kind of the stacked-deal screen ($kind: player,
-- seat, table or session; $grps the groups' names as deal_groups.sql writes them), at most $limit hands a group,
-- best deals first, for replaying hand by hand (xuezhan replay HAND --warehouse W shows the deal). One query for
-- all the kind's flagged groups: a room with many flags is still one pass over player_hands. Over the hands whose
-- hand_id lies in [$lo, $hi] ($lo NULL: every hand): pipeline/audit/deals.py reads one run of
-- pipeline/analytics/runs.py at a time and keeps each group's $limit best of the runs' rows (a hand is in one run).
WITH
dealt AS (
    SELECT
        ph.hand_id,
        ph.seat,
        ph.player,
        ph.dealer,
        ph.deal_shanten::INTEGER AS shanten,
        ph.deal_suited::INTEGER AS suited,
        CASE $kind
            WHEN 'player' THEN ph.player
            WHEN 'seat' THEN h.table_id || ' seat ' || ph.seat::VARCHAR
            WHEN 'table' THEN h.table_id
            WHEN 'session' THEN h.session_id
        END AS grp
    FROM player_hands AS ph
    JOIN hands AS h ON h.hand_id = ph.hand_id
    WHERE ph.deal_shanten IS NOT NULL AND h.level IN ('full', 'dealt') AND ($lo IS NULL OR ph.hand_id BETWEEN $lo AND $hi)
)

SELECT grp, hand_id, seat, player, dealer, shanten, suited
FROM dealt
WHERE grp IN (SELECT unnest($grps::VARCHAR[]))
QUALIFY row_number() OVER (PARTITION BY grp ORDER BY shanten, hand_id, seat) <= $limit
ORDER BY grp, shanten, hand_id, seat

-- deal_evidence: the dealt hands of one group of the stacked-deal screen ($kind: player, seat, table or
-- session; $grp its name as deal_groups.sql writes it), best deals first, for replaying hand by hand
-- (xuezhan replay HAND --warehouse W shows the deal).
WITH
dealt AS (
    SELECT
        ph.hand_id,
        ph.seat,
        ph.player,
        h.table_id,
        h.session_id,
        ph.dealer,
        ph.deal_shanten::INTEGER AS shanten,
        ph.deal_suited::INTEGER AS suited
    FROM player_hands AS ph
    JOIN hands AS h ON h.hand_id = ph.hand_id
    WHERE ph.deal_shanten IS NOT NULL AND h.level IN ('full', 'dealt')
)

SELECT hand_id, seat, player, dealer, shanten, suited
FROM dealt
WHERE
    ($kind = 'player' AND player = $grp)
    OR ($kind = 'seat' AND table_id || ' seat ' || seat::VARCHAR = $grp)
    OR ($kind = 'table' AND table_id = $grp)
    OR ($kind = 'session' AND session_id = $grp)
ORDER BY shanten, hand_id, seat
LIMIT $limit

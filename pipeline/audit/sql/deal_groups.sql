-- deal_groups: the dealt hands of every group the stacked-deal screen tests (pipeline/audit/deals.py), counted
-- by table shape: per group, per number of suits in play and deal size (13, the dealer 14), the hands and the
-- sum of their starting shanten (player_hands.deal_shanten) and of their tiles outside the shortest suit.
-- Groups: each player; each seat of each table (a rigged automatic table favours a place, whoever sits there);
-- each table; each session. Only hands whose every hand is known (levels full and dealt: deal_shanten is null
-- elsewhere) and whose deal replayed.
WITH
dealt AS (
    SELECT
        ph.player,
        ph.seat,
        h.table_id,
        h.session_id,
        length(h.suits)::INTEGER AS suits,
        CASE WHEN ph.dealer THEN 14 ELSE 13 END AS size,
        ph.deal_shanten::INTEGER AS shanten,
        ph.deal_suited::INTEGER AS suited
    FROM player_hands AS ph
    JOIN hands AS h ON h.hand_id = ph.hand_id
    WHERE ph.deal_shanten IS NOT NULL AND h.level IN ('full', 'dealt')
),

grouped AS (
    SELECT 'player' AS kind, player AS grp, suits, size, shanten, suited FROM dealt
    UNION ALL
    SELECT 'seat', table_id || ' seat ' || seat::VARCHAR, suits, size, shanten, suited
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
    count(*)::BIGINT AS hands,
    sum(shanten)::BIGINT AS shanten,
    coalesce(sum(suited), 0)::BIGINT AS suited,
    count(suited)::BIGINT AS suited_hands
FROM grouped
GROUP BY kind, grp, suits, size
ORDER BY kind, grp, suits, size

-- net_flows: per replayed hand, every ordered pair of players at the table (a, x) and the points a paid x net
-- of what x paid a in that hand, by the engine's own settlement (payments.side = 'computed': wins, kongs,
-- 查叫, 花猪, 退税 and transfers; penalties to the pot leave the table and are no one's gain). A hand with no
-- payment between two players still gives their row, with 0: the victim view compares what a player paid
-- each opponent with what it paid the others at the same table, so every opponent must be there.
-- One run of hands at a time, [$lo, $hi] (pipeline/analytics/runs.py): every ordered pair at every table is 12 rows a
-- hand, and the victim view reads them a run at a time so that its memory does not grow with the warehouse.
WITH
seated AS (
    SELECT ph.hand_id, ph.player
    FROM player_hands AS ph
    JOIN hands AS h ON h.hand_id = ph.hand_id
    WHERE h.replayed AND h.hand_id BETWEEN $lo AND $hi
),

pairs AS (
    SELECT a.hand_id, a.player AS payer, x.player AS payee
    FROM seated AS a
    JOIN seated AS x ON x.hand_id = a.hand_id AND x.player <> a.player
),

paid AS (
    SELECT hand_id, payer_player AS payer, payee_player AS payee, sum(amount)::BIGINT AS amount
    FROM payments
    WHERE side = 'computed' AND payee_player IS NOT NULL AND hand_id BETWEEN $lo AND $hi
    GROUP BY ALL
)

SELECT
    p.hand_id,
    p.payer,
    p.payee,
    (coalesce(out.amount, 0) - coalesce(back.amount, 0))::BIGINT AS net
FROM pairs AS p
LEFT JOIN paid AS out ON out.hand_id = p.hand_id AND out.payer = p.payer AND out.payee = p.payee
LEFT JOIN paid AS back ON back.hand_id = p.hand_id AND back.payer = p.payee AND back.payee = p.payer
ORDER BY p.hand_id, p.payer, p.payee

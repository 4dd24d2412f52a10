-- head_to_head: one player ($player; NULL: every player, the report's player pages) against each player they
-- sat with, over the hands both played to the end
-- (player_hands.replayed: a stopped replay's payments and wins are partial). Every level of record counts:
-- the wins (who, on whose tile) and the payments are what every level states (pipeline/analytics/levels.py,
-- claims).
--   hands          hands together
--   won_from       points $player received from the opponent (the engine's computed payments, every reason:
--                  hu, kong, 查花猪, 查大叫, 退税, 呼叫转移, penalties paid to a seat)
--   lost_to        points $player paid the opponent
--   net_sum, net_sq  sum and sum of squares over the hands together of won_from - lost_to in each (a hand
--                  with no payment between them counts 0): the mean net per hand and its interval
--   deal_ins_to    wins of the opponent on $player's discard or robbed kong (点炮 to them), deal_in_hands the
--                  hands with at least one
--   wins_from      wins of $player on the opponent's discard or robbed kong, win_hands the hands with one
--   player         whose row it is ($player, or each player when $player is NULL)
-- Ordered by player, then hands together (most first), then opponent. Over the hands whose hand_id lies in
-- [$lo, $hi] (one run of pipeline/analytics/runs.py: every column is a sum over hands, and
-- pipeline/analytics/queries.py sums the runs' rows, so that the memory is one run's).
-- Checks: won_from - lost_to = net_sum; deal_in_hands <= deal_ins_to; deal_in_hands <= hands; summed over the
-- opponents, deal_ins_to is the player's deal_ins (player_base) and won_from - lost_to their delta_sum when no
-- point went to the pot.
WITH
mine AS (  -- source: the hands $player played to the end, and their seat
    SELECT hand_id, seat, player
    FROM player_hands
    WHERE ($player IS NULL OR player = $player) AND replayed AND hand_id BETWEEN $lo AND $hi
),

together AS (  -- renamed: one row per hand and opponent, with both seats
    SELECT m.hand_id, m.player, m.seat AS my_seat, o.player AS opponent, o.seat AS their_seat
    FROM mine AS m
    JOIN player_hands AS o ON o.hand_id = m.hand_id AND o.seat <> m.seat
    WHERE o.hand_id BETWEEN $lo AND $hi
),

money AS (  -- logic: what each paid the other in each hand
    SELECT
        t.hand_id,
        t.player,
        t.opponent,
        coalesce(sum(p.amount) FILTER (WHERE p.payer = t.their_seat AND p.payee = t.my_seat), 0) AS won_from,
        coalesce(sum(p.amount) FILTER (WHERE p.payer = t.my_seat AND p.payee = t.their_seat), 0) AS lost_to
    FROM together AS t
    LEFT JOIN payments AS p ON p.hand_id = t.hand_id AND p.side = 'computed' AND p.hand_id BETWEEN $lo AND $hi
    GROUP BY t.hand_id, t.player, t.opponent
),

claims AS (  -- logic: the wins on each other's tiles in each hand
    SELECT
        t.hand_id,
        t.player,
        t.opponent,
        count(w.seat) FILTER (
            WHERE w.seat = t.their_seat AND w.source = t.my_seat AND w.how IN ('discard', 'rob_kong')
        ) AS deal_ins_to,
        count(w.seat) FILTER (
            WHERE w.seat = t.my_seat AND w.source = t.their_seat AND w.how IN ('discard', 'rob_kong')
        ) AS wins_from
    FROM together AS t
    LEFT JOIN wins AS w ON w.hand_id = t.hand_id AND w.hand_id BETWEEN $lo AND $hi
    GROUP BY t.hand_id, t.player, t.opponent
)

SELECT  -- final
    m.player,
    m.opponent,
    count(*) AS hands,
    sum(m.won_from)::BIGINT AS won_from,
    sum(m.lost_to)::BIGINT AS lost_to,
    sum(m.won_from - m.lost_to)::BIGINT AS net_sum,
    sum((m.won_from - m.lost_to) * (m.won_from - m.lost_to))::BIGINT AS net_sq,
    sum(c.deal_ins_to)::BIGINT AS deal_ins_to,
    count(*) FILTER (WHERE c.deal_ins_to > 0) AS deal_in_hands,
    sum(c.wins_from)::BIGINT AS wins_from,
    count(*) FILTER (WHERE c.wins_from > 0) AS win_hands
FROM money AS m
JOIN claims AS c ON c.hand_id = m.hand_id AND c.player = m.player AND c.opponent = m.opponent
GROUP BY m.player, m.opponent
ORDER BY m.player, hands DESC, m.opponent

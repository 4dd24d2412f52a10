-- player_base: per player (and group), the counts every player metric is built from, split by what the hand's
-- record carries: its level (full | dealt | observer | settlement, schemas/XZLOG.md) and own (the record shows
-- this seat's whole hand: every seat of a full or dealt record, the recording seat of an observer's, none of a
-- score sheet's). Each metric adds up the rows its level table allows (pipeline/analytics/levels.py), so that
-- a figure a level cannot carry (pongs of a score sheet) is left out, not counted as zero.
-- Parameters: $by ('all' | 'seat' | 'dealer' | 'profile' | 'month'), $player (a player id, or NULL for all).
-- Only hands whose replay reached the end count (player_hands.replayed): a stopped replay's facts are partial.
-- Checks: hands >= wins >= self_draw_wins; hands >= deal_in_hands; deal_ins >= deal_in_hands;
-- wins >= win_turn_n; deal_in_hands <= deal_in_turn_n <= deal_ins at the levels with draws; ready_judged >= ready_turn_n.
-- Turns (巡目, schemas/METRICS.md#turns): each win's and deal-in's as ingest stored them (wins.turn, source_turn:
-- pipeline/game/events.py turns_begun); for a hand stored without them, counted here from its events the same way:
-- the dealer's first turn with the deal, then one per draw from the wall (not a replacement draw: a draw straight
-- after the seat's own kong), pong and direct kong. A score sheet has no draws: no turns (the levels, NEEDS).
-- Deal luck (schemas/METRICS.md#luck): the room's mean net per hand, in bases, of the seat-hands dealt alike (a
-- cell: scale group, suits, dealer or not, starting shanten), fitted on every replayed seat-hand in scope (not
-- only $player's); a seat-hand's luck-adjusted net is its net less its cell's departure from its group's mean
-- (a control variate), its raw net where the deal is not known or the cell has fewer than 30 seat-hands.
-- Draw luck: each player_hands.draw_luck_* (sums of mean-zero chance terms, pipeline/game/evidence.py LUCK) times
-- its slope in its scale group: the deal-adjusted net regressed on it alone, through 0 (its mean is 0 by
-- construction; the features are sums over different draws, near uncorrelated), on every seat-hand of the group
-- that has them (0 for a group of under 30). The slopes are rounded (1e-9): the same whatever the order of the sums.
-- Both are fitted from the table luck_cells: luck_cells.sql's sums over every replayed seat-hand in scope, added up
-- (the caller registers it). Every other column is a count or a sum over seat-hands, so the rows of runs of hands,
-- added up, are the warehouse's (pipeline/analytics/queries.py player_base_levels, pipeline/analytics/runs.py).
-- Run by DuckDB, or by Spark SQL with `stats --engine spark` (pipeline/analytics/spark.py): written in the SQL both
-- read alike (CAST, not ::; no list, no `SELECT * REPLACE`, x * x for a square); $by 'month' alone stays on DuckDB
-- (local_time is its macro).
WITH
room_net AS (  -- logic: each scale group's mean net per seat-hand, in bases
    SELECT profile, base, sum(net_sum) / sum(n) AS mean
    FROM luck_cells
    GROUP BY profile, base
),

deal_luck AS (  -- logic: each cell's expected net beyond its group's mean (0 for a cell of under 30 seat-hands)
    SELECT
        c.*,
        CASE WHEN c.n >= 30 THEN c.net_sum / c.n - r.mean ELSE 0 END AS luck,
        r.mean AS mean
    FROM luck_cells AS c
    JOIN room_net AS r ON r.profile = c.profile AND r.base = c.base
),

draw_luck AS (  -- logic: each scale group's slope of the rest of the net (less the deal's expectation, mean + luck,
    -- fitted) on each draw luck, through 0 (0 under 30 seat-hands with draw luck)
    SELECT
        profile,
        base,
        CASE WHEN sum(drawn) >= 30 AND sum(xx_win) > 0
            THEN round(sum(net_x_win - (mean + luck) * x_win) / sum(xx_win), 9) ELSE 0 END AS b_win,
        CASE WHEN sum(drawn) >= 30 AND sum(xx_paid) > 0
            THEN round(sum(net_x_paid - (mean + luck) * x_paid) / sum(xx_paid), 9) ELSE 0 END AS b_paid,
        CASE WHEN sum(drawn) >= 30 AND sum(xx_ready) > 0
            THEN round(sum(net_x_ready - (mean + luck) * x_ready) / sum(xx_ready), 9) ELSE 0 END AS b_ready,
        CASE WHEN sum(drawn) >= 30 AND sum(xx_rivals) > 0
            THEN round(sum(net_x_rivals - (mean + luck) * x_rivals) / sum(xx_rivals), 9) ELSE 0 END AS b_rivals,
        CASE WHEN sum(drawn) >= 30 AND sum(xx_kong) > 0
            THEN round(sum(net_x_kong - (mean + luck) * x_kong) / sum(xx_kong), 9) ELSE 0 END AS b_kong,
        CASE WHEN sum(drawn) >= 30 AND sum(xx_fed) > 0
            THEN round(sum(net_x_fed - (mean + luck) * x_fed) / sum(xx_fed), 9) ELSE 0 END AS b_fed
    FROM deal_luck
    GROUP BY profile, base
),

seen AS (  -- an observer's record: the seat whose draws it shows (the other seats' draws are hidden)
    SELECT DISTINCT e.hand_id, e.seat
    FROM events AS e
    JOIN hands AS h ON h.hand_id = e.hand_id
    WHERE h.level = 'observer' AND e.t = 'draw' AND e.tile IS NOT NULL
),

seat_hands AS (  -- source: one row per hand and seat; fan in the Chinese count (plain hand 1 fan, see fan_base)
    SELECT
        ph.hand_id,
        ph.seat,
        ph.player,
        ph.won,
        ph.how,
        ph.win_order,
        ph.deal_ins,
        ph.points,
        ph.fan + 1 - coalesce(h.fan_base, 1) AS fan,
        ph.delta,
        ph.hua_zhu,
        ph.ready_at_end,
        ph.pongs,
        ph.kongs_direct,
        ph.kongs_added,
        ph.kongs_concealed,
        ph.void,
        ph.passed_wins,
        ph.compulsory_passes,
        ph.ready_turn,
        ph.deal_shanten,
        ph.delta - (  -- in points, as delta: less the deal's luck and the draws'
            coalesce(l.luck, 0)
            + coalesce(b.b_win * ph.draw_luck_win, 0)
            + coalesce(b.b_paid * ph.draw_luck_paid, 0)
            + coalesce(b.b_ready * ph.draw_luck_ready, 0)
            + coalesce(b.b_rivals * ph.draw_luck_rivals, 0)
            + coalesce(b.b_kong * ph.draw_luck_kong, 0)
            + coalesce(b.b_fed * ph.draw_luck_fed, 0)
        ) * h.base AS luck_net,
        CASE $by
            WHEN 'seat' THEN CAST(ph.seat AS STRING)
            WHEN 'dealer' THEN CASE WHEN ph.dealer THEN 'dealer' ELSE 'not dealer' END
            WHEN 'profile' THEN ph.profile
            -- the month of the hand's local time (the record's own offset, or --tz: local_time.sql)
            WHEN 'month' THEN strftime(local_time(h.played_at, h.utc_offset), '%Y-%m')
            ELSE 'all'
        END AS grp,
        coalesce(h.ready_judged, false) AS ready_judged,  -- null: ingested before ready_turn (unknown)
        -- a hand stored before levels were recorded carried at least a deal and every event (no score sheets)
        coalesce(h.level, 'dealt') AS level,
        CASE coalesce(h.level, 'dealt')
            WHEN 'settlement' THEN false
            WHEN 'observer' THEN v.seat IS NOT NULL
            ELSE true
        END AS own
    FROM player_hands AS ph
    JOIN hands AS h ON h.hand_id = ph.hand_id
    LEFT JOIN seen AS v ON v.hand_id = ph.hand_id AND v.seat = ph.seat
    LEFT JOIN deal_luck AS l
        ON
            l.profile = coalesce(ph.profile, '')
            AND l.base = h.base
            AND l.suits = coalesce(h.suits, '')
            AND l.dealer = ph.dealer
            AND l.deal_shanten = ph.deal_shanten
    LEFT JOIN draw_luck AS b ON b.profile = coalesce(ph.profile, '') AND b.base = h.base
    WHERE ph.replayed AND ($player IS NULL OR ph.player = $player)
),

uncounted AS (  -- hands whose wins ingest stored without their turns (an older warehouse): counted from the events
    SELECT DISTINCT w.hand_id, h.dealer
    FROM wins AS w
    JOIN hands AS h ON h.hand_id = w.hand_id
    WHERE w.turn IS NULL AND h.replayed AND coalesce(h.level, 'dealt') IN ('full', 'dealt', 'observer')
),

turn_marks AS (  -- source: their events, with the event before each (a draw straight after its seat's kong replaces)
    SELECT
        e.hand_id,
        e.idx,
        e.t,
        e.seat,
        e.source,
        u.dealer,
        e.t = 'pong' OR (e.t = 'kong' AND e.kind = 'direct') OR (
            e.t = 'draw'
            AND NOT coalesce(
                lag(e.t) OVER w = 'kong' AND lag(e.seat) OVER w = e.seat, false
            )
        ) AS begins
    FROM events AS e
    JOIN uncounted AS u ON u.hand_id = e.hand_id
    WINDOW w AS (PARTITION BY e.hand_id ORDER BY e.idx)
),

turns AS (  -- logic: at each of their events, the turns each seat (0-3) has begun, the event included
    SELECT
        hand_id,
        idx,
        t,
        seat,
        source,
        CAST(dealer = 0 AS INTEGER) + count(CASE WHEN begins AND seat = 0 THEN 1 END) OVER w AS begun_0,
        CAST(dealer = 1 AS INTEGER) + count(CASE WHEN begins AND seat = 1 THEN 1 END) OVER w AS begun_1,
        CAST(dealer = 2 AS INTEGER) + count(CASE WHEN begins AND seat = 2 THEN 1 END) OVER w AS begun_2,
        CAST(dealer = 3 AS INTEGER) + count(CASE WHEN begins AND seat = 3 THEN 1 END) OVER w AS begun_3
    FROM turn_marks
    WINDOW w AS (PARTITION BY hand_id ORDER BY idx ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW)
),

hu_turns AS (  -- each win: the winner's turn, and its discarder's (the turn it dealt in), as ingest stored them
    SELECT w.hand_id, w.seat, w.source, CAST(w.turn AS INTEGER) AS win_turn, CAST(w.source_turn AS INTEGER) AS source_turn
    FROM wins AS w
    WHERE w.turn IS NOT NULL
    UNION ALL  -- or counted from the events
    SELECT
        hand_id,
        seat,
        source,
        CASE seat WHEN 0 THEN begun_0 WHEN 1 THEN begun_1 WHEN 2 THEN begun_2 WHEN 3 THEN begun_3 END AS win_turn,
        CASE source WHEN 0 THEN begun_0 WHEN 1 THEN begun_1 WHEN 2 THEN begun_2 WHEN 3 THEN begun_3 END AS source_turn
    FROM turns
    WHERE t = 'hu'
),

win_turns AS (  -- the turn of each seat's first win
    SELECT hand_id, seat, min(win_turn) AS win_turn
    FROM hu_turns
    GROUP BY hand_id, seat
),

deal_in_turns AS (  -- per seat, the turns of the tiles it dealt in with (one each, however many won on it)
    SELECT hand_id, seat, sum(turn) AS turn_sum, sum(turn * turn) AS turn_sq, count(*) AS turn_n
    FROM (SELECT DISTINCT hand_id, source AS seat, source_turn AS turn FROM hu_turns WHERE source IS NOT NULL)
    GROUP BY hand_id, seat
),

deal_in_wins AS (  -- renamed: each win paid by a discarder, as (hand, discarding seat, points)
    SELECT w.hand_id, w.source AS seat, w.points
    FROM wins AS w
    WHERE w.how IN ('discard', 'rob_kong')
),

deal_in_by_seat AS (
    SELECT hand_id, seat, sum(points) AS points_lost, CAST(sum(points * points) AS BIGINT) AS points_lost_sq
    FROM deal_in_wins
    GROUP BY hand_id, seat
),

joined AS (  -- logic: one row per hand and seat with its deal-in money and its turns
    SELECT
        s.*,
        coalesce(d.points_lost, 0) AS points_lost,
        coalesce(d.points_lost_sq, 0) AS points_lost_sq,
        CASE WHEN s.won THEN wt.win_turn END AS win_turn,
        coalesce(dt.turn_sum, 0) AS deal_in_turn_sum,
        coalesce(dt.turn_sq, 0) AS deal_in_turn_sq,
        coalesce(dt.turn_n, 0) AS deal_in_turn_n,
        CASE WHEN s.ready_judged THEN CAST(s.ready_turn AS INTEGER) END AS known_ready_turn
    FROM seat_hands AS s
    LEFT JOIN deal_in_by_seat AS d ON d.hand_id = s.hand_id AND d.seat = s.seat
    LEFT JOIN win_turns AS wt ON wt.hand_id = s.hand_id AND wt.seat = s.seat
    LEFT JOIN deal_in_turns AS dt ON dt.hand_id = s.hand_id AND dt.seat = s.seat
)

SELECT  -- final
    player,
    grp,
    level,
    own,
    count(*) AS hands,
    count(*) FILTER (WHERE won) AS wins,
    count(*) FILTER (WHERE how = 'self_draw') AS self_draw_wins,
    count(*) FILTER (WHERE win_order = 1) AS first_wins,
    count(*) FILTER (WHERE win_order = 2) AS second_wins,
    count(*) FILTER (WHERE win_order = 3) AS third_wins,
    count(*) FILTER (WHERE deal_ins > 0) AS deal_in_hands,
    CAST(coalesce(sum(deal_ins), 0) AS BIGINT) AS deal_ins,
    CAST(coalesce(sum(deal_ins * deal_ins), 0) AS BIGINT) AS deal_ins_sq,
    CAST(sum(points_lost) AS BIGINT) AS points_lost,
    CAST(sum(points_lost_sq) AS BIGINT) AS points_lost_sq,
    CAST(coalesce(sum(fan) FILTER (WHERE won), 0) AS BIGINT) AS fan_sum,
    CAST(coalesce(sum(fan * fan) FILTER (WHERE won), 0) AS BIGINT) AS fan_sq,
    CAST(coalesce(sum(points) FILTER (WHERE won), 0) AS BIGINT) AS points_sum,
    CAST(coalesce(sum(points * points) FILTER (WHERE won), 0) AS BIGINT) AS points_sq,
    CAST(sum(delta) AS BIGINT) AS delta_sum,
    CAST(sum(delta * delta) AS BIGINT) AS delta_sq,
    sum(luck_net) AS luck_net_sum,  -- a sum of fractions: rounded (1e-6) where the runs' sums are added up
    sum(luck_net * luck_net) AS luck_net_sq,
    count(*) FILTER (WHERE hua_zhu) AS hua_zhu,
    count(*) FILTER (WHERE ready_at_end IS NOT NULL) AS still_in_at_draw,
    count(*) FILTER (WHERE ready_at_end = false) AS not_ready_at_draw,
    CAST(sum(pongs) AS BIGINT) AS pongs,
    CAST(sum(pongs * pongs) AS BIGINT) AS pongs_sq,
    CAST(sum(kongs_direct) AS BIGINT) AS kongs_direct,
    CAST(sum(kongs_direct * kongs_direct) AS BIGINT) AS kongs_direct_sq,
    CAST(sum(kongs_added) AS BIGINT) AS kongs_added,
    CAST(sum(kongs_added * kongs_added) AS BIGINT) AS kongs_added_sq,
    CAST(sum(kongs_concealed) AS BIGINT) AS kongs_concealed,
    CAST(sum(kongs_concealed * kongs_concealed) AS BIGINT) AS kongs_concealed_sq,
    count(void) AS void_declared,
    count(*) FILTER (WHERE void = 'm') AS void_m,
    count(*) FILTER (WHERE void = 'p') AS void_p,
    count(*) FILTER (WHERE void = 's') AS void_s,
    CAST(sum(passed_wins) AS BIGINT) AS passed_wins,
    CAST(sum(compulsory_passes) AS BIGINT) AS compulsory_passes,
    CAST(coalesce(sum(win_turn), 0) AS BIGINT) AS win_turn_sum,
    CAST(coalesce(sum(win_turn * win_turn), 0) AS BIGINT) AS win_turn_sq,
    count(win_turn) AS win_turn_n,
    CAST(sum(deal_in_turn_sum) AS BIGINT) AS deal_in_turn_sum,
    CAST(sum(deal_in_turn_sq) AS BIGINT) AS deal_in_turn_sq,
    CAST(sum(deal_in_turn_n) AS BIGINT) AS deal_in_turn_n,
    count(*) FILTER (WHERE ready_judged) AS ready_judged,
    CAST(coalesce(sum(known_ready_turn), 0) AS BIGINT) AS ready_turn_sum,
    CAST(coalesce(sum(known_ready_turn * known_ready_turn), 0) AS BIGINT) AS ready_turn_sq,
    count(known_ready_turn) AS ready_turn_n,
    count(*) FILTER (WHERE known_ready_turn <= 6) AS ready_by_turn_6,
    CAST(coalesce(sum(CAST(deal_shanten AS INTEGER)), 0) AS BIGINT) AS deal_shanten_sum,
    CAST(coalesce(sum(CAST(deal_shanten AS INTEGER) * CAST(deal_shanten AS INTEGER)), 0) AS BIGINT) AS deal_shanten_sq,
    count(deal_shanten) AS deal_shanten_n
FROM joined
GROUP BY player, grp, level, own
ORDER BY player, grp NULLS LAST, level, own

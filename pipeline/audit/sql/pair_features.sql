-- pair_features: for every replayed hand and ordered pair of seats (a → x), what a's tiles did for x while
-- both were still in. One row per hand and ordered seat pair (12 per hand).
--   exposure    a's discards and added kongs while x was still in (the chances a had to give x a tile)
--   feed_win    x won on a's discard or robbed a's added kong
--   feed_call   x ponged or direct-konged a's discard
--   feed_kong   x direct-konged a's discard
--   kong_offer  a's discard was the fourth tile of a triplet x held concealed (x could kong it: events.could_kong)
--   feed_value  x won on a's tile with a hand of 2 fan or more (collusion.py BIG_FAN: a valuable win)
--   feed_costly x won on a's discard, which left a's own hand further from ready than a's best discard
--               (events.cost > 0: a tile given up at a cost to one's own hand)
--   kong_costly a's discard at such a cost was the fourth tile of a triplet x held concealed (taken or not)
--   feed_costly_value  x won on such a discard with a hand of 2 fan or more (a valuable win given at a cost)
--   could_feed  a's tile was one x could have won on (a dangerous discard for x)
--   chosen_danger  ... and a held another tile nobody could win on that was as good for a's own hand
--                  (a dangerous discard by choice; a forced one is no evidence)
--   soft_pass   x could have won on a's tile and did not
--   passed      the same count, whose base_passed is over the chances to pass only: the offers x could win on
--               (pipeline/audit/collusion.py GIVEN: passed wins per chance to pass)
--   channel     x collected 查叫 or 花猪 money from a at the end of the wall (0/1)
--   feed_sheet  x won on a's discard or robbed a's kong (0/1), in a hand whose discards are not recorded (a score
--               sheet: level settlement, pipeline/analytics/levels.py); base_feed_sheet: 1 in such a hand, else 0
--   gift        a's 换三张 tiles went to x and were of a longest suit of x's deal (0/1; player_hands gift_fit)
--   split       x declared a void that a held fewer tiles of than the void a declared (0/1; player_hands
--               void_over: a void chosen against a's own hand, leaving x's suit to x); base_gift, base_split: 1
--               where the hand's start facts are known (levels full and dealt), else 0
--   level       the hand's level of record (a hand stored before levels were recorded: dealt)
--   base_*      the same counts expected from the population's rate at each point of the hand (tiles left in
--               the wall): late discards are far more dangerous than early ones, so pairs left alone late in
--               hands have more chances, and these baselines say how many.
-- Checks: feed_win + soft_pass = could_feed; every count <= exposure except channel.
WITH
hands_in AS (  -- source: replayed hands
    SELECT hand_id, players, coalesce(level, 'dealt') AS level, coalesce(level, 'dealt') = 'settlement' AS sheet
    FROM hands
    WHERE replayed
),

ev AS (  -- renamed: events with the event each hu answers (the last non-hu event before it)
    SELECT
        e.hand_id, e.idx, e.t, e.seat, e.source, e.kind, e.could_win, e.could_kong, e.wall_left, e.safe_alternative,
        coalesce(e.cost, 0) > 0 AS costly,
        w.fan,
        last_value(CASE WHEN e.t <> 'hu' THEN e.idx END IGNORE NULLS)
            OVER (PARTITION BY e.hand_id ORDER BY e.idx ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS target
    FROM events AS e
    JOIN hands_in AS h ON h.hand_id = e.hand_id
    LEFT JOIN wins AS w ON w.hand_id = e.hand_id AND w.event = e.idx
    WHERE e.replayed
),

out_at AS (  -- when each winner left the hand
    SELECT hand_id, seat, min(idx) AS won_at FROM ev WHERE t = 'hu' GROUP BY hand_id, seat
),

offers AS (  -- a's tiles others could take: discards and added kongs
    SELECT hand_id, idx, seat AS a, could_win, could_kong, wall_left, coalesce(safe_alternative, false) AS safe, costly
    FROM ev WHERE t = 'discard' OR (t = 'kong' AND kind = 'added')
),

seats AS (  -- every seat of each hand: four, or three at a table of three
    SELECT hand_id, players, level, sheet, unnest(range(len(players))) AS s FROM hands_in
),

seat_pairs AS (
    SELECT a.hand_id, a.players, a.level, a.sheet, a.s AS a, x.s AS x
    FROM seats AS a
    JOIN seats AS x ON x.hand_id = a.hand_id AND x.s <> a.s
),

offer_rows AS (  -- logic: each offer of a, for each x still in at that moment
    SELECT o.hand_id, o.idx, o.a, p.x, o.wall_left, o.safe, o.costly, list_contains(o.could_win, p.x::TINYINT) AS could,
           coalesce(list_contains(o.could_kong, p.x::TINYINT), false) AS kongable
    FROM offers AS o
    JOIN seat_pairs AS p ON p.hand_id = o.hand_id AND p.a = o.a
    LEFT JOIN out_at AS wa ON wa.hand_id = o.hand_id AND wa.seat = o.a
    LEFT JOIN out_at AS wx ON wx.hand_id = o.hand_id AND wx.seat = p.x
    WHERE (wa.won_at IS NULL OR wa.won_at > o.idx) AND (wx.won_at IS NULL OR wx.won_at > o.idx)
),

took AS (  -- x's wins and calls on a's offers
    SELECT hand_id, target AS idx, seat AS x, max(CASE WHEN t = 'hu' THEN 1 ELSE 0 END) AS won,
           max(CASE WHEN t IN ('pong', 'kong') THEN 1 ELSE 0 END) AS called,
           max(CASE WHEN t = 'kong' THEN 1 ELSE 0 END) AS konged,
           sum(CASE WHEN t = 'hu' THEN coalesce(fan, 0) ELSE 0 END) AS fan
    FROM ev
    WHERE t = 'hu' OR t = 'pong' OR (t = 'kong' AND kind = 'direct')
    GROUP BY hand_id, target, seat
),

per_offer AS (
    SELECT o.hand_id, o.a, o.x, o.wall_left, o.could, o.kongable, o.could AND o.safe AS chosen, coalesce(k.won, 0) AS won,
           coalesce(k.called, 0) AS called, coalesce(k.konged, 0) AS konged, coalesce(k.fan, 0) AS fan,
           CASE WHEN o.costly AND coalesce(k.won, 0) = 1 THEN 1 ELSE 0 END AS costly_won,
           CASE WHEN o.costly AND o.kongable THEN 1 ELSE 0 END AS costly_kong,
           CASE WHEN o.costly AND coalesce(k.won, 0) = 1 AND coalesce(k.fan, 0) >= 2 THEN 1 ELSE 0 END AS costly_value
    FROM offer_rows AS o
    LEFT JOIN took AS k ON k.hand_id = o.hand_id AND k.idx = o.idx AND k.x = o.x
),

hazard AS (  -- the population's rate of each outcome per offer, by tiles left in the wall
    SELECT
        wall_left,
        avg(won) AS h_win,
        avg(called) AS h_call,
        avg(konged) AS h_kong,
        avg(CASE WHEN fan >= 2 THEN 1 ELSE 0 END) AS h_value,
        avg(CASE WHEN kongable THEN 1 ELSE 0 END) AS h_kongable,
        avg(costly_won) AS h_costly_won,
        avg(costly_kong) AS h_costly_kong,
        avg(costly_value) AS h_costly_value,
        avg(CASE WHEN could THEN 1 ELSE 0 END) AS h_could,
        avg(CASE WHEN chosen THEN 1 ELSE 0 END) AS h_chosen,
        avg(CASE WHEN could AND won = 0 THEN 1 ELSE 0 END) AS h_soft,
        coalesce(avg(CASE WHEN won = 0 THEN 1 ELSE 0 END) FILTER (WHERE could), 0) AS h_passed
    FROM per_offer
    GROUP BY wall_left
),

offer_counts AS (
    SELECT
        hand_id, a, x,
        count(*) AS exposure,
        sum(won) AS feed_win,
        sum(called) AS feed_call,
        sum(konged) AS feed_kong,
        count(*) FILTER (WHERE fan >= 2) AS feed_value,
        count(*) FILTER (WHERE kongable) AS kong_offer,
        sum(costly_won) AS feed_costly,
        sum(costly_kong) AS kong_costly,
        sum(costly_value) AS feed_costly_value,
        count(*) FILTER (WHERE could) AS could_feed,
        count(*) FILTER (WHERE could AND won = 0) AS soft_pass,
        count(*) FILTER (WHERE chosen) AS chosen_danger,
        sum(h.h_win) AS base_feed_win,
        sum(h.h_call) AS base_feed_call,
        sum(h.h_kong) AS base_feed_kong,
        sum(h.h_value) AS base_feed_value,
        sum(h.h_kongable) AS base_kong_offer,
        sum(h.h_costly_won) AS base_feed_costly,
        sum(h.h_costly_kong) AS base_kong_costly,
        sum(h.h_costly_value) AS base_feed_costly_value,
        sum(h.h_could) AS base_could_feed,
        sum(h.h_chosen) AS base_chosen_danger,
        sum(h.h_soft) AS base_soft_pass,
        sum(CASE WHEN could THEN h.h_passed ELSE 0 END) AS base_passed
    FROM per_offer
    JOIN hazard AS h USING (wall_left)
    GROUP BY hand_id, a, x
),

channels AS (
    SELECT p.hand_id, p.payer AS a, p.payee AS x, 1 AS channel
    FROM payments AS p
    JOIN hands_in AS h ON h.hand_id = p.hand_id
    WHERE p.side = 'computed' AND p.reason IN ('cha_jiao', 'hua_zhu')
    GROUP BY p.hand_id, p.payer, p.payee
),

starts AS (  -- what a did for x before play
    SELECT a.hand_id, a.seat AS a, x.seat AS x,
           (CASE WHEN a.gift_fit AND a.gave_to = x.seat THEN 1 ELSE 0 END) AS gift,
           (CASE WHEN (a.void_over::INTEGER >> (CASE x.void WHEN 'm' THEN 0 WHEN 'p' THEN 1 WHEN 's' THEN 2 END)) & 1 = 1
                 THEN 1 ELSE 0 END) AS split
    FROM player_hands AS a
    JOIN player_hands AS x ON x.hand_id = a.hand_id AND x.seat <> a.seat
),

known_starts AS (  -- hands whose start facts are known
    SELECT hand_id FROM player_hands GROUP BY hand_id
    HAVING bool_or(gave_to IS NOT NULL OR void_over IS NOT NULL)
),

sheet_feeds AS (  -- a score sheet's wins on another's tile
    SELECT w.hand_id, w.source AS a, w.seat AS x, 1 AS feed_sheet
    FROM wins AS w
    JOIN hands_in AS h ON h.hand_id = w.hand_id
    WHERE h.sheet AND w.source IS NOT NULL
    GROUP BY w.hand_id, w.source, w.seat
)

SELECT  -- final
    sp.hand_id,
    sp.players[sp.a + 1] AS player_a,
    sp.players[sp.x + 1] AS player_x,
    sp.a::TINYINT AS seat_a,
    sp.x::TINYINT AS seat_x,
    coalesce(c.exposure, 0)::INTEGER AS exposure,
    coalesce(c.feed_win, 0)::INTEGER AS feed_win,
    coalesce(c.feed_call, 0)::INTEGER AS feed_call,
    coalesce(c.feed_kong, 0)::INTEGER AS feed_kong,
    coalesce(c.feed_value, 0)::INTEGER AS feed_value,
    coalesce(c.kong_offer, 0)::INTEGER AS kong_offer,
    coalesce(c.feed_costly, 0)::INTEGER AS feed_costly,
    coalesce(c.kong_costly, 0)::INTEGER AS kong_costly,
    coalesce(c.feed_costly_value, 0)::INTEGER AS feed_costly_value,
    coalesce(c.could_feed, 0)::INTEGER AS could_feed,
    coalesce(c.soft_pass, 0)::INTEGER AS soft_pass,
    coalesce(c.soft_pass, 0)::INTEGER AS passed,
    coalesce(c.chosen_danger, 0)::INTEGER AS chosen_danger,
    coalesce(c.base_feed_win, 0)::DOUBLE AS base_feed_win,
    coalesce(c.base_feed_call, 0)::DOUBLE AS base_feed_call,
    coalesce(c.base_feed_kong, 0)::DOUBLE AS base_feed_kong,
    coalesce(c.base_feed_value, 0)::DOUBLE AS base_feed_value,
    coalesce(c.base_kong_offer, 0)::DOUBLE AS base_kong_offer,
    coalesce(c.base_feed_costly, 0)::DOUBLE AS base_feed_costly,
    coalesce(c.base_kong_costly, 0)::DOUBLE AS base_kong_costly,
    coalesce(c.base_feed_costly_value, 0)::DOUBLE AS base_feed_costly_value,
    coalesce(c.base_could_feed, 0)::DOUBLE AS base_could_feed,
    coalesce(c.base_chosen_danger, 0)::DOUBLE AS base_chosen_danger,
    coalesce(c.base_soft_pass, 0)::DOUBLE AS base_soft_pass,
    coalesce(c.base_passed, 0)::DOUBLE AS base_passed,
    coalesce(ch.channel, 0)::INTEGER AS channel,
    coalesce(sf.feed_sheet, 0)::INTEGER AS feed_sheet,
    (CASE WHEN sp.sheet THEN 1 ELSE 0 END)::DOUBLE AS base_feed_sheet,
    (CASE WHEN ks.hand_id IS NULL THEN 0 ELSE coalesce(st.gift, 0) END)::INTEGER AS gift,
    (CASE WHEN ks.hand_id IS NULL THEN 0 ELSE coalesce(st.split, 0) END)::INTEGER AS split,
    (CASE WHEN ks.hand_id IS NULL THEN 0 ELSE 1 END)::DOUBLE AS base_gift,
    (CASE WHEN ks.hand_id IS NULL THEN 0 ELSE 1 END)::DOUBLE AS base_split,
    sp.level
FROM seat_pairs AS sp
LEFT JOIN offer_counts AS c ON c.hand_id = sp.hand_id AND c.a = sp.a AND c.x = sp.x
LEFT JOIN channels AS ch ON ch.hand_id = sp.hand_id AND ch.a = sp.a AND ch.x = sp.x
LEFT JOIN sheet_feeds AS sf ON sf.hand_id = sp.hand_id AND sf.a = sp.a AND sf.x = sp.x
LEFT JOIN starts AS st ON st.hand_id = sp.hand_id AND st.a = sp.a AND st.x = sp.x
LEFT JOIN known_starts AS ks ON ks.hand_id = sp.hand_id
ORDER BY sp.hand_id, sp.a, sp.x

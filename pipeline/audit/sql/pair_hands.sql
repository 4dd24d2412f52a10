-- pair_hands: the replayed hands whose hand_id lies in [$lo, $hi] (one run of hands, pipeline/analytics/runs.py), numbered
-- as pair_events.sql numbers them (hno), with their players by seat and the end-of-wall payments the screen's
-- channel signal counts: channel has bit 4 × payer + payee set when the payee collected 查叫 or 花猪 money
-- from the payer (computed settlement); feed has bit 4 × discarder + winner set when the winner won on the
-- discarder's tile (a discard or a robbed kong: what a score sheet says of a win's `from`); level is the record's
-- level (a hand stored before levels were recorded: dealt), and seen has bit s set when the record shows seat s's
-- whole hand (every seat of a full or dealt record, the seat whose draws an observer's record shows, none of a
-- score sheet's). gift has bit 4 × a + x set when a's 换三张 tiles went to x and were of a longest suit of x's
-- deal, split when x declared a void a held fewer tiles of than the void a declared (player_hands gift_fit,
-- void_over); start is 1 when the hand's start facts are known (a hand stored before those columns: 0).
-- Which feature may use which hand is pipeline/analytics/levels.py's table, applied by the screen.
WITH
hands_in AS (
    SELECT hand_id, players, coalesce(level, 'dealt') AS level,
           (row_number() OVER (ORDER BY hand_id) - 1)::INTEGER AS hno
    FROM hands
    WHERE replayed AND hand_id BETWEEN $lo AND $hi
),

feeds AS (
    SELECT w.hand_id, bit_or(1::INTEGER << (4 * w.source::INTEGER + w.seat::INTEGER))::INTEGER AS feed
    FROM wins AS w
    WHERE w.hand_id BETWEEN $lo AND $hi AND w.source IS NOT NULL
    GROUP BY w.hand_id
),

seen AS (  -- an observer's record: the seats whose draws it shows
    SELECT e.hand_id, bit_or(1::INTEGER << e.seat::INTEGER)::INTEGER AS seen
    FROM events AS e
    JOIN hands_in AS h ON h.hand_id = e.hand_id
    WHERE e.hand_id BETWEEN $lo AND $hi AND h.level = 'observer' AND e.t = 'draw' AND e.tile IS NOT NULL
    GROUP BY e.hand_id
),

starts AS (  -- what each seat did for another before play: 换三张 gifts that fit, voids split
    SELECT a.hand_id,
           bit_or(CASE WHEN a.gift_fit AND a.gave_to = x.seat
                       THEN 1::INTEGER << (4 * a.seat::INTEGER + x.seat::INTEGER) ELSE 0 END)::INTEGER AS gift,
           bit_or(CASE WHEN (a.void_over::INTEGER >> (CASE x.void WHEN 'm' THEN 0 WHEN 'p' THEN 1 WHEN 's' THEN 2 END)) & 1 = 1
                       THEN 1::INTEGER << (4 * a.seat::INTEGER + x.seat::INTEGER) ELSE 0 END)::INTEGER AS split,
           max(CASE WHEN a.gave_to IS NOT NULL OR a.void_over IS NOT NULL THEN 1 ELSE 0 END)::INTEGER AS known
    FROM player_hands AS a
    JOIN player_hands AS x ON x.hand_id = a.hand_id AND x.seat <> a.seat
    WHERE a.hand_id BETWEEN $lo AND $hi AND x.hand_id BETWEEN $lo AND $hi
    GROUP BY a.hand_id
),

channels AS (
    SELECT p.hand_id, bit_or(1::INTEGER << (4 * p.payer::INTEGER + p.payee::INTEGER))::INTEGER AS channel
    FROM payments AS p
    WHERE p.hand_id BETWEEN $lo AND $hi AND p.side = 'computed' AND p.reason IN ('cha_jiao', 'hua_zhu')
        AND p.payer IS NOT NULL AND p.payee IS NOT NULL
    GROUP BY p.hand_id
)

SELECT
    h.hno, h.hand_id, h.players, coalesce(c.channel, 0)::INTEGER AS channel, coalesce(f.feed, 0)::INTEGER AS feed,
    coalesce(st.gift, 0)::INTEGER AS gift, coalesce(st.split, 0)::INTEGER AS split,
    coalesce(st.known, 0)::INTEGER AS start, h.level,
    (CASE h.level WHEN 'settlement' THEN 0 WHEN 'observer' THEN coalesce(s.seen, 0) ELSE 15 END)::INTEGER AS seen
FROM hands_in AS h
LEFT JOIN channels AS c ON c.hand_id = h.hand_id
LEFT JOIN feeds AS f ON f.hand_id = h.hand_id
LEFT JOIN seen AS s ON s.hand_id = h.hand_id
LEFT JOIN starts AS st ON st.hand_id = h.hand_id
ORDER BY h.hno

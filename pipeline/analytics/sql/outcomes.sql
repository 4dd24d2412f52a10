-- outcomes: how hands end, replayed hands only, over every table of the warehouse (outcomes_by_table.sql
-- splits them by table shape).
-- winners_0..3: hands by number of winners; huang_zhuang: the wall ran out with two or more players still in
-- (黄庄; at a table of three as at four); multi_win_hands: hands with at least one 一炮多响 (two or more wins on one tile: a discard, or an
-- added kong robbed by several, as the engine's dealer rule counts it);
-- events_sum / events_sq: hand length in events.
-- Check: winners_0 + winners_1 + winners_2 + winners_3 = hands.
WITH
source AS (
    SELECT hand_id, winners, outcome, events, coalesce(seats, 4) AS seats FROM hands WHERE replayed
),

multi AS (  -- wins on one tile share hand, discarder and win order
    SELECT DISTINCT w.hand_id
    FROM wins AS w
    WHERE w.how IN ('discard', 'rob_kong')
    GROUP BY w.hand_id, w.source, w.win_order
    HAVING count(*) >= 2
)

SELECT
    count(*) AS hands,
    count(*) FILTER (WHERE winners = 0) AS winners_0,
    count(*) FILTER (WHERE winners = 1) AS winners_1,
    count(*) FILTER (WHERE winners = 2) AS winners_2,
    count(*) FILTER (WHERE winners = 3) AS winners_3,
    count(*) FILTER (WHERE winners = 4) AS winners_4,  -- 血流成河: everybody may win
    count(*) FILTER (WHERE outcome = 'wall_empty' AND seats - winners >= 2) AS huang_zhuang,
    count(*) FILTER (WHERE hand_id IN (SELECT hand_id FROM multi)) AS multi_win_hands,
    coalesce(sum(events), 0)::BIGINT AS events_sum,
    coalesce(sum(events * events), 0)::BIGINT AS events_sq
FROM source

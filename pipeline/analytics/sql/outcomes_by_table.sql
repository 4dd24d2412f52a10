-- outcomes_by_table: how hands end at each table shape (seats, suits in play, mode), replayed hands only,
-- so that 黄庄 and "winners per hand" are read against the table they happened at: a blood battle of four
-- is played out at 3 winners, of three at 2; an ordinary hand (普通版) at its first win.
-- huang_zhuang: the wall ran out with two or more players still in (黄庄 / 流局).
-- Check: the hands of all rows add up to the replayed hands of outcomes.sql.
WITH
source AS (  -- hands of a warehouse written before the shape columns have null shape: tables of four, mps
    SELECT hand_id, winners, outcome, coalesce(seats, 4) AS seats, coalesce(suits, 'mps') AS suits,
           coalesce(mode, 'blood_battle') AS mode
    FROM hands
    WHERE replayed
),

multi AS (  -- wins on one tile share hand, discarder and win order
    SELECT DISTINCT w.hand_id
    FROM wins AS w
    WHERE w.how IN ('discard', 'rob_kong')
    GROUP BY w.hand_id, w.source, w.win_order
    HAVING count(*) >= 2
)

SELECT
    seats, suits, mode,
    count(*) AS hands,
    count(*) FILTER (WHERE winners = 0) AS winners_0,
    count(*) FILTER (WHERE winners = 1) AS winners_1,
    count(*) FILTER (WHERE winners = 2) AS winners_2,
    count(*) FILTER (WHERE winners = 3) AS winners_3,
    count(*) FILTER (WHERE winners = 4) AS winners_4,  -- 血流成河: everybody may win
    count(*) FILTER (WHERE outcome = 'won_out') AS won_out,
    count(*) FILTER (WHERE outcome = 'wall_empty' AND seats - winners >= 2) AS huang_zhuang,
    count(*) FILTER (WHERE hand_id IN (SELECT hand_id FROM multi)) AS multi_win_hands
FROM source
GROUP BY seats, suits, mode
ORDER BY hands DESC, seats DESC, suits, mode

-- anticipation_best: each player's $keep judged choices of waits that hit, widest margin first (then by hand and
-- event): the evidence of the winning-tile anticipation signal (pipeline/audit/anticipation.py).
WITH
ranked AS (
    SELECT
        player,
        hand_id,
        idx,
        seat,
        chosen,
        options,
        row_number() OVER (PARTITION BY player ORDER BY margin DESC, hand_id, idx) AS rank
    FROM wait_choices
    WHERE hit
)

SELECT player, hand_id, idx, seat, chosen, options
FROM ranked
WHERE rank <= $keep
ORDER BY player, rank

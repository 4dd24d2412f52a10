-- anticipation_best: each player's $keep judged choices of waits that hit, widest margin first (then by hand and
-- event): the evidence of the winning-tile anticipation signal (pipeline/audit/anticipation.py). One row a player
-- (by player), its choices a list in that order: arg_min's n smallest keys are kept as the rows stream by, a
-- player's $keep at most, where ranking every hit (a window over all of them) held them all.
SELECT
    player,
    arg_min(
        {'hand_id': hand_id, 'idx': idx, 'seat': seat, 'chosen': chosen, 'options': options},
        {'margin': -margin, 'hand_id': hand_id, 'idx': idx},
        $keep
    ) AS best
FROM wait_choices
WHERE hit
GROUP BY player
ORDER BY player

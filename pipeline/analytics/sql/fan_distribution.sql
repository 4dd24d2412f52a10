-- fan_distribution: wins by total fan (computed by the engine, before the cap), replayed hands only, in the
-- Chinese count (a plain hand is 1 fan): a hand of a profile counting it 0 (fan_base = 0, sbr) is shifted
-- by one, so that one warehouse's rules share one scale.
-- Check: the counts sum to the number of wins in replayed hands.
WITH
source AS (
    SELECT w.fan + 1 - coalesce(h.fan_base, 1) AS fan
    FROM wins AS w
    JOIN hands AS h ON h.hand_id = w.hand_id
    WHERE h.replayed
)

SELECT fan, count(*) AS wins
FROM source
GROUP BY fan
ORDER BY fan

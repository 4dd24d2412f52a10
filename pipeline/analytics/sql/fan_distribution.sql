-- fan_distribution: wins by total fan (computed by the engine, before the cap), replayed hands only.
-- Check: the counts sum to the number of wins in replayed hands.
WITH
source AS (
    SELECT w.fan
    FROM wins AS w
    JOIN hands AS h ON h.hand_id = w.hand_id
    WHERE h.replayed
)

SELECT fan, count(*) AS wins
FROM source
GROUP BY fan
ORDER BY fan

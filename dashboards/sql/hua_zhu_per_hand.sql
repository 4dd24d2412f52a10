-- hua_zhu_per_hand: hands that reached an empty wall, by how many flower pigs (花猪) they ended with.
-- Only there can a player be a flower pig (查花猪 happens when the wall runs out), so those hands are the
-- denominator; and only at tables of three suits (with two in play nobody can end a pig). Replayed hands
-- only: a stopped replay's facts are partial.
-- Check: the hands add up to the replayed hands with outcome 'wall_empty'; pigs <= seats - winners.
WITH
source AS (
    SELECT hand_id FROM hands
    WHERE replayed AND outcome = 'wall_empty' AND length(coalesce(suits, 'mps')) = 3
),

pigs AS (  -- logic: flower pigs per hand
    SELECT s.hand_id, count(*) FILTER (WHERE ph.hua_zhu) AS pigs
    FROM source AS s
    JOIN player_hands AS ph ON ph.hand_id = s.hand_id
    GROUP BY s.hand_id
)

SELECT pigs::INTEGER AS pigs, count(*) AS hands
FROM pigs
GROUP BY pigs
ORDER BY pigs

-- wall_commitments: the hands whose record carries a wall commitment, by what it proved (hands.wall_commitment:
-- verified, seed_only, unrevealed, seed_mismatch, wall_mismatch), with the first $limit hands of each status
-- whose commitment failed (a wall changed after it was committed, or a seed that is not the committed one).
SELECT
    wall_commitment AS status,
    count(*) AS hands,
    list(hand_id ORDER BY hand_id)[1:$limit] AS first_hands
FROM hands
WHERE wall_commitment IS NOT NULL
GROUP BY wall_commitment
ORDER BY wall_commitment

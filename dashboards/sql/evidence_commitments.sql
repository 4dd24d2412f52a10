-- evidence_commitments: what the wall commitment of each of the hands $hand_ids proved (hands.wall_commitment),
-- for the stacked-deal page's evidence; hands whose record carries no commitment are left out.
SELECT hand_id, wall_commitment
FROM hands
WHERE hand_id IN (SELECT unnest($hand_ids::VARCHAR[])) AND wall_commitment IS NOT NULL

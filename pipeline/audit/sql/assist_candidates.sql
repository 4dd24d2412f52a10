-- assist_candidates: the evidence the engine-assistance screen may show, read back from the review pass
-- (pipeline/audit/assist.py stored_room): per player, decision kind and band, the $evidence best of the hands'
-- candidates (decision_cells' top: each hand's heaviest agreed decision of that kind and band), heavier first,
-- then by hand and event: the order of assist.Candidate.key, so that the screen shows what it would show had it
-- reviewed the hands itself. Only the kinds in $kinds and the bands up to $last_band (the tested ones).
-- Check: at most $evidence rows per player, kind and band; each row one hand's top.
SELECT c.player, c.kind, c.band, c.top_weight, c.hand_id, c.top_event, c.top_chosen, c.top_gap
FROM decision_cells AS c
SEMI JOIN _assist_hands AS s ON c.hand_id = s.hand_id
WHERE
    c.version = $version
    AND c.top_weight IS NOT NULL
    AND list_contains($kinds, c.kind)
    AND c.band BETWEEN 0 AND $last_band
QUALIFY
    row_number() OVER (
        PARTITION BY c.player, c.kind, c.band
        ORDER BY c.top_weight DESC, c.hand_id, coalesce(c.top_event, -1)
    ) <= $evidence
ORDER BY c.player, c.kind, c.band, c.top_weight DESC, c.hand_id, coalesce(c.top_event, -1)

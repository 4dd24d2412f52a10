-- assist_candidates: the evidence the engine-assistance screen may show, read back from the review pass
-- (pipeline/audit/assist.py stored_room): per player, decision kind and band, the $evidence best of the hands'
-- candidates (decision_cells' top: each hand's heaviest agreed decision of that kind and band), heavier first,
-- then by hand and event: the order of assist.Candidate.key, so that the screen shows what it would show had it
-- reviewed the hands itself. Only the kinds in $kinds and the bands up to $last_band (the tested ones). min_by
-- keeps $evidence rows a group (a window over every candidate held 1.7 GB at 1M hands).
-- Check: at most $evidence candidates per player, kind and band, best first; each one hand's top.
SELECT
    c.player,
    c.kind,
    c.band,
    min_by(
        {'weight': c.top_weight, 'hand_id': c.hand_id, 'event': c.top_event, 'chosen': c.top_chosen, 'gap': c.top_gap},
        {'w': -c.top_weight, 'h': c.hand_id, 'e': coalesce(c.top_event, -1)},
        $evidence
    ) AS best
FROM decision_cells AS c
SEMI JOIN _assist_hands AS s ON c.hand_id = s.hand_id
WHERE
    c.version = $version
    AND c.top_weight IS NOT NULL
    AND list_contains($kinds, c.kind)
    AND c.band BETWEEN 0 AND $last_band
GROUP BY c.player, c.kind, c.band
ORDER BY c.player, c.kind, c.band

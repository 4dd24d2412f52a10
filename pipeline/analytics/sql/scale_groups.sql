-- scale_groups: the stored hands by scale group, the hands whose money is in one unit: a profile and its base
-- (底, hands.base: 1 in the Chinese profiles, 1,000 in majsoul). One row per profile and base with player NULL
-- (the hands), and one per player, profile and base (the hands that player sat in), for a player's group: the
-- group of most of their stored hands (pipeline/analytics/scales.py).
-- Check: the rows with player NULL sum to the stored hands; a player's rows to the hands they sat in.
SELECT NULL::VARCHAR AS player, profile, base, count(*) AS hands
FROM hands
GROUP BY profile, base

UNION ALL

SELECT ph.player, h.profile, h.base, count(*) AS hands
FROM player_hands AS ph
JOIN hands AS h ON h.hand_id = ph.hand_id
GROUP BY ph.player, h.profile, h.base

ORDER BY player NULLS FIRST, profile, base

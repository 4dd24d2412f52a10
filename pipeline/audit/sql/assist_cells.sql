-- assist_cells: the engine-assistance screen's tallies read back from the review pass (pipeline/audit/assist.py
-- stored_room): per player, decision kind and band, the sums of decision_cells' counts over the hands of
-- _assist_hands (a registered table of hand ids: the hands in scope the pass reviewed at version $version), and
-- the hands each player decided in. What `tally` sums in Python from the same per-hand rows when it reviews.
-- Check: sum(n) over a player's rows is its decisions in those hands; hands counts each hand once.
WITH
cells AS (
    SELECT c.*
    FROM decision_cells AS c
    SEMI JOIN _assist_hands AS s ON c.hand_id = s.hand_id
    WHERE c.version = $version
),
players AS (
    SELECT player, count(DISTINCT hand_id) AS hands
    FROM cells
    GROUP BY player
)
SELECT
    c.player,
    p.hands,
    c.kind,
    c.band,
    sum(c.n) AS n,
    sum(c.agreed) AS agreed,
    sum(c.w) AS w,
    sum(c.wa) AS wa,
    sum(c.w2) AS w2,
    sum(c.w3) AS w3
FROM cells AS c
JOIN players AS p USING (player)
GROUP BY c.player, p.hands, c.kind, c.band
ORDER BY c.player, c.kind, c.band

-- assist_cells: the engine-assistance screen's tallies read back from the review pass (pipeline/audit/assist.py
-- stored_room): per player, decision kind and band, the sums of decision_cells' counts over the hands of
-- _assist_hands (a temporary table of hand ids: the hands in scope the pass reviewed at version $version), and
-- the hands each player decided in: its decision_tallies rows with a decision (the same review wrote a player-hand's
-- decision_cells rows exactly where it counted a decision; a count of distinct hands over the cells held 3.4 GB
-- at 1M hands). What `tally` sums in Python from the same per-hand rows when it reviews.
-- Check: sum(n) over a player's rows is its decisions in those hands; hands counts each hand once; w, wa, w2 and
-- w3 are integers (HUGEINT: a sum over many hands passes 2^63 units).
WITH
cells AS (
    SELECT
        c.player,
        c.kind,
        c.band,
        sum(c.n) AS n,
        sum(c.agreed) AS agreed,
        -- the weights' sums in whole units of 2^-40 (assist.UNIT, each hand's rounded down as assist.units does):
        -- integers, added exactly in any order, so the figures are the same run to run and reviewed or read back
        sum(CAST(floor(c.w * $unit) AS BIGINT)) AS w,
        sum(CAST(floor(c.wa * $unit) AS BIGINT)) AS wa,
        sum(CAST(floor(c.w2 * $unit) AS BIGINT)) AS w2,
        sum(CAST(floor(c.w3 * $unit) AS BIGINT)) AS w3
    FROM decision_cells AS c
    SEMI JOIN _assist_hands AS s ON c.hand_id = s.hand_id
    WHERE c.version = $version
    GROUP BY c.player, c.kind, c.band
),
players AS (
    SELECT t.player, count(*) AS hands
    FROM decision_tallies AS t
    SEMI JOIN _assist_hands AS s ON t.hand_id = s.hand_id
    WHERE t.version = $version AND t.decisions > 0
    GROUP BY t.player
)
SELECT c.player, p.hands, c.kind, c.band, c.n, c.agreed, c.w, c.wa, c.w2, c.w3
FROM cells AS c
JOIN players AS p USING (player)
ORDER BY c.player, c.kind, c.band

-- anticipation_tally: the winning-tile anticipation signal's counts per player (pipeline/audit/anticipation.py):
-- `hands`, the hands of levels full and dealt it played (a seat each: wait_choices judges only those);
-- `decisions`, its choices of waits ingest judged (wait_choices, one row each); `hits`, those where the wait
-- chosen had the most copies left in the wall; `unjudged`, its hands of those levels that ingest did not judge
-- (hands.waits_judged null: a warehouse made before the column, to ingest again).
WITH
seated AS (
    SELECT
        unnest(h.players) AS player,
        h.waits_judged
    FROM hands AS h
    WHERE coalesce(h.level, 'dealt') IN ('full', 'dealt')  -- a hand stored before levels were recorded: dealt
),

played AS (
    SELECT
        player,
        count(*) AS hands,
        count(*) FILTER (WHERE waits_judged IS NULL) AS unjudged
    FROM seated
    GROUP BY player
),

judged AS (
    SELECT
        player,
        count(*) AS decisions,
        count(*) FILTER (WHERE hit) AS hits
    FROM wait_choices
    GROUP BY player
)

SELECT
    p.player,
    p.hands,
    p.unjudged,
    coalesce(j.decisions, 0) AS decisions,
    coalesce(j.hits, 0) AS hits
FROM played AS p
LEFT JOIN judged AS j ON j.player = p.player
ORDER BY p.player

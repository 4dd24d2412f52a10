-- run_health: each ingest run's figures, in the order the runs started: what it read, stored, found invalid and
-- rejected, its hands with a scoring or settlement error (an error-severity SCORE_* or SETTLE_* issue: money
-- paid other than the rules give), the newest hand it stored, the players and issue codes it was the first to
-- bring, and the issue codes it brought.
-- Check: stored = the run's rows in hands; settle_errors <= invalid <= stored; new_players <= players.
WITH
runs AS (  -- source: the runs' own counts
    SELECT run_id, started_at, finished_at, lines_read, rejects, duplicates
    FROM ingest_runs
),

ordered AS (  -- logic: a run's place in time (ties: by id)
    SELECT *, row_number() OVER (ORDER BY started_at, run_id) AS run_no FROM runs
),

hands_of AS (  -- source: the hands each run stored
    SELECT ingest_run AS run_id, hand_id, valid, played_at, players FROM hands
),

issue_rows AS MATERIALIZED (  -- source: issues read once (the view computes the session issues over every hand)
    SELECT hand_id, code, severity FROM issues
),

settle AS (  -- logic: hands with money paid other than the rules give
    SELECT DISTINCT hand_id
    FROM issue_rows
    WHERE severity = 'error' AND (code LIKE 'SCORE\_%' ESCAPE '\' OR code LIKE 'SETTLE\_%' ESCAPE '\')
),

by_run AS (
    SELECT
        h.run_id,
        count(*) AS stored,
        count(*) FILTER (WHERE NOT h.valid) AS invalid,
        count(s.hand_id) AS settle_errors,
        max(h.played_at) AS newest
    FROM hands_of AS h
    LEFT JOIN settle AS s ON s.hand_id = h.hand_id
    GROUP BY h.run_id
),

seen AS (  -- logic: the players of each run, each once
    SELECT DISTINCT o.run_no, p.player
    FROM (SELECT run_id, unnest(players) AS player FROM hands_of) AS p
    JOIN ordered AS o USING (run_id)
),

players_of AS (  -- a player is new in the first run they played in
    SELECT
        s.run_no,
        count(*) AS players,
        count(*) FILTER (WHERE s.run_no = f.first_run) AS new_players
    FROM seen AS s
    JOIN (SELECT player, min(run_no) AS first_run FROM seen GROUP BY player) AS f USING (player)
    GROUP BY s.run_no
),

codes AS (  -- logic: each issue code's first run, and the codes of each run
    SELECT i.code, o.run_no
    FROM issue_rows AS i
    JOIN hands AS h ON h.hand_id = i.hand_id
    JOIN ordered AS o ON o.run_id = h.ingest_run
    GROUP BY i.code, o.run_no
),

codes_of AS (
    SELECT
        c.run_no,
        list(c.code ORDER BY c.code) AS codes,
        list(c.code ORDER BY c.code) FILTER (WHERE c.run_no = f.first_run) AS new_codes
    FROM codes AS c
    JOIN (SELECT code, min(run_no) AS first_run FROM codes GROUP BY code) AS f USING (code)
    GROUP BY c.run_no
)

SELECT
    o.run_no,
    o.run_id,
    o.started_at,
    o.finished_at,
    coalesce(o.lines_read, 0) AS lines_read,
    coalesce(o.rejects, 0) AS rejects,
    coalesce(o.duplicates, 0) AS duplicates,
    coalesce(b.stored, 0) AS stored,
    coalesce(b.invalid, 0) AS invalid,
    coalesce(b.settle_errors, 0) AS settle_errors,
    b.newest,
    coalesce(p.players, 0) AS players,
    coalesce(p.new_players, 0) AS new_players,
    coalesce(c.codes, []) AS codes,
    coalesce(c.new_codes, []) AS new_codes
FROM ordered AS o
LEFT JOIN by_run AS b USING (run_id)
LEFT JOIN players_of AS p USING (run_no)
LEFT JOIN codes_of AS c USING (run_no)
ORDER BY o.run_no

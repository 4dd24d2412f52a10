-- session_issues: the checks that span hands (pipeline/validate.py check_sessions), over the stored hands of each
-- session_id in hand_no order, as rows of the issues table: the `issues` view of every connection and of
-- warehouse.duckdb is the stored issues and these, so that audit, stats, the report and replay show them with the
-- hand's own findings. Worked out when read, never stored: a hand ingested later (the missing hand 3 of a session)
-- changes them at once, and no run has to rewrite another run's rows. A duplicate hand_id never reaches here: the
-- same record again is skipped, another record under a stored hand_id is a reject (INGEST_CONFLICT).
--   SESSION_HAND_REPEAT  error    hand_no repeats within a session
--   SESSION_HAND_GAP     warning  hand_no skips numbers (the dealer rule is not judged across the gap)
--   SESSION_PLAYERS      warning  the players change between consecutive hands
--   SESSION_DEALER       error    the dealer is not the one the previous hand's result makes (hands.next_dealer)
-- Messages as the validator prints them. {hands} names the hands view to read; {sessions} the variable that can
-- name the only sessions to judge.
WITH
ordered AS (  -- source: hands of a session, in hand_no order (ties: as stored)
    SELECT
        hand_id, session_id, hand_no, players, dealer, next_dealer, source_file, source_line,
        lag(hand_id) OVER w AS p_hand_id,
        lag(hand_no) OVER w AS p_hand_no,
        lag(players) OVER w AS p_players,
        lag(next_dealer) OVER w AS p_next_dealer
    FROM {hands}
    WHERE session_id IS NOT NULL AND hand_no IS NOT NULL
        -- a reader of a few hands' issues names their sessions (warehouse.session_checks_of); unset (a constant
        -- NULL when the view is bound, the condition folded away): every session
        AND (getvariable('{sessions}') IS NULL OR list_contains(getvariable('{sessions}'), session_id))
    WINDOW w AS (PARTITION BY session_id ORDER BY hand_no, source_file, source_line, hand_id)
),

judged AS (  -- logic: each hand against the one before it
    SELECT
        *,
        players[dealer + 1] AS dealt_by,
        CASE WHEN p_next_dealer IS NOT NULL THEN p_players[p_next_dealer + 1] END AS due
    FROM ordered
    WHERE p_hand_id IS NOT NULL
)

SELECT  -- final
    hand_id, 'SESSION_HAND_REPEAT' AS code, 'error' AS severity, NULL::TINYINT AS seat, NULL AS expected,
    NULL AS actual,
    printf('session %s: hand_no %d repeats (%s, %s)', session_id, hand_no, p_hand_id, hand_id) AS message,
    source_file, source_line
FROM judged WHERE hand_no = p_hand_no
UNION ALL
SELECT
    hand_id, 'SESSION_HAND_GAP', 'warning', NULL, NULL, NULL,
    printf('session %s: hand_no jumps from %d to %d', session_id, p_hand_no, hand_no), source_file, source_line
FROM judged WHERE hand_no <> p_hand_no + 1 AND hand_no <> p_hand_no
UNION ALL
SELECT
    hand_id, 'SESSION_PLAYERS', 'warning', NULL, NULL, NULL,
    printf('session %s: players change from %s to %s', session_id,
           '[' || array_to_string(list_transform(p_players, lambda p: '''' || p || ''''), ', ') || ']',
           '[' || array_to_string(list_transform(players, lambda p: '''' || p || ''''), ', ') || ']'),
    source_file, source_line
FROM judged WHERE hand_no = p_hand_no + 1 AND p_players <> players
UNION ALL
SELECT
    hand_id, 'SESSION_DEALER', 'error', dealer::TINYINT, due, dealt_by,
    printf('session %s hand %d: dealer is %s, the rules make %s dealer after hand %d', session_id, hand_no,
           dealt_by, due, p_hand_no),
    source_file, source_line
FROM judged WHERE hand_no = p_hand_no + 1 AND due IS NOT NULL AND dealt_by IS DISTINCT FROM due

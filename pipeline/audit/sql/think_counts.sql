-- think_counts: the think-time screen's timed decisions read back from the review pass (pipeline/audit/think.py
-- stored_times): per player, difficulty and time (ms), the decisions decision_times holds of the hands of
-- _timed_stored (a temporary table: the hands in scope with times that the pass stored at version $version).
-- What think.decision_times counts of the same hands replayed.
-- Check: sum(n) over a player's rows is its timed decisions in those hands.
SELECT d.player, d.difficulty, d.ms, sum(d.n) AS n
FROM decision_times AS d
SEMI JOIN _timed_stored AS s ON d.hand_id = s.hand_id
WHERE d.version = $version
GROUP BY d.player, d.difficulty, d.ms

-- pair_events: the events the collusion screen reads, of the replayed hands whose hand_id lies in [$lo, $hi]
-- (one run of hands, pipeline/analytics/runs.py): the offers (discards and added kongs: a tile others could take) and the
-- takes (wins, pongs and direct kongs), each with its hand's number in the run (hno: 0, 1, … by hand_id).
-- The screen counts pair_features.sql's features from them (pipeline/audit/collusion.py), in memory for one
-- run of hands at a time: over the run's own rows (read in file order), or over the warehouse's by the range where
-- the tables are not in one order (then every scan filters hand_id on it, so that DuckDB skips the row groups
-- outside it).
--   kind    0 discard, 1 added kong, 2 direct kong, 3 pong, 4 hu
--   could   the seats that could have won on an offer, as bits (seat s: 1 << s)
--   kongable  the seats holding three of a discard's tile concealed (events.could_kong), as bits: they could kong it
--   safe    the discarder held a tile nobody could win on that was as good (pair_features.sql's chosen)
--   costly  the discard left the discarder's hand further from ready than its best discard (events.cost > 0)
--   wall_left  -1 when the record has none (an offer the hazard has no rate for: it counts nowhere)
--   fan     a win's total fan (wins.fan; 0 for every other event and a win the engine did not value)
-- Events are numbered 0, 1, 2, … in their record and the replayed ones are a prefix of it
-- (pipeline/ingest/work.py), so "the last event before a win that is not a win" is found from the run of
-- consecutive wins it belongs to.
WITH
hands_in AS (
    SELECT hand_id, (row_number() OVER (ORDER BY hand_id) - 1)::INTEGER AS hno
    FROM hands
    WHERE replayed AND hand_id BETWEEN $lo AND $hi
)

SELECT
    h.hno,
    e.idx::INTEGER AS idx,
    e.seat::TINYINT AS seat,
    (CASE e.t WHEN 'discard' THEN 0 WHEN 'pong' THEN 3 WHEN 'hu' THEN 4 ELSE (CASE e.kind WHEN 'added' THEN 1 ELSE 2 END) END)::TINYINT AS kind,
    (CASE WHEN list_contains(e.could_win, 0::TINYINT) THEN 1 ELSE 0 END
     + CASE WHEN list_contains(e.could_win, 1::TINYINT) THEN 2 ELSE 0 END
     + CASE WHEN list_contains(e.could_win, 2::TINYINT) THEN 4 ELSE 0 END
     + CASE WHEN list_contains(e.could_win, 3::TINYINT) THEN 8 ELSE 0 END)::TINYINT AS could,
    (CASE WHEN list_contains(e.could_kong, 0::TINYINT) THEN 1 ELSE 0 END
     + CASE WHEN list_contains(e.could_kong, 1::TINYINT) THEN 2 ELSE 0 END
     + CASE WHEN list_contains(e.could_kong, 2::TINYINT) THEN 4 ELSE 0 END
     + CASE WHEN list_contains(e.could_kong, 3::TINYINT) THEN 8 ELSE 0 END)::TINYINT AS kongable,
    coalesce(e.safe_alternative, false) AS safe,
    coalesce(e.cost, 0) > 0 AS costly,
    coalesce(e.wall_left, -1)::SMALLINT AS wall_left,
    coalesce(w.fan, 0)::SMALLINT AS fan
FROM events AS e
JOIN hands_in AS h ON h.hand_id = e.hand_id
LEFT JOIN wins AS w ON w.hand_id = e.hand_id AND w.event = e.idx AND w.hand_id BETWEEN $lo AND $hi
WHERE e.replayed AND e.hand_id BETWEEN $lo AND $hi
    AND (e.t IN ('discard', 'pong', 'hu') OR (e.t = 'kong' AND e.kind IN ('added', 'direct')))

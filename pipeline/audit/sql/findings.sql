-- findings: every validator issue of a stored hand as an audit finding, with the money involved.
-- money: for a scoring or settlement difference, the points it moves (the validator's issues.money);
-- for a rule violation, the points the source system settled in that hand (the money its verdict rests on).
-- One wrong payment is counted once: a claimed win's wrong fan or points (SCORE_FAN, SCORE_POINTS) is the
-- reason for the wrong payments of that win, so when the hand has a settlement finding at the win's event
-- (SETTLE_AMOUNT, _MISSING, _EXTRA, _PAYER) or a per-seat SETTLE_DELTA, that finding carries the money and the
-- score finding carries none; SCORE_FAN beside SCORE_POINTS of the same win leaves the money to SCORE_POINTS.
-- counted_in: for such a reason finding, the code of the finding that carries its money (null otherwise);
-- reasons: for a finding that carries money, the codes of its reason findings, comma-separated (null if none).
-- position: the replay's state where a rule violation stopped it (null for other findings).
-- month: of the hand's local time (the record's own offset, or --tz: pipeline/analytics/sql/local_time.sql).
-- Ranked by money at stake, then hand, event, code, seat and message (a total order: the same on any connection).
WITH
stake AS (  -- claimed money per hand: what the winners of the claimed settlement took
    SELECT hand_id, sum(greatest(coalesce(claimed_delta, delta), 0))::BIGINT AS stake
    FROM player_hands
    GROUP BY hand_id
),

found AS (  -- source: issues with their hand's context
    SELECT
        i.hand_id, i.code, i.severity, i.event, i.seat, i.expected, i.actual, i.message, i.money, i.position,
        h.table_id, h.played_at, h.utc_offset, h.players
    FROM issues AS i
    JOIN hands AS h ON h.hand_id = i.hand_id
),

carrier AS (  -- logic: the finding that carries a score finding's money (see the header)
    SELECT
        f.hand_id, f.event, f.code,
        coalesce(
            (SELECT min(g.code) FROM found AS g
             WHERE g.hand_id = f.hand_id AND g.event = f.event
               AND g.code IN ('SETTLE_AMOUNT', 'SETTLE_MISSING', 'SETTLE_EXTRA', 'SETTLE_PAYER')),
            (SELECT min(g.code) FROM found AS g WHERE g.hand_id = f.hand_id AND g.code = 'SETTLE_DELTA'),
            (SELECT min(g.code) FROM found AS g
             WHERE f.code = 'SCORE_FAN' AND g.hand_id = f.hand_id AND g.event = f.event AND g.code = 'SCORE_POINTS')
        ) AS counted_in
    FROM found AS f
    WHERE f.code IN ('SCORE_FAN', 'SCORE_POINTS') AND f.event IS NOT NULL
),

reasoned AS (  -- logic: per carrying finding, the codes of the findings it is the payment of
    SELECT c.hand_id, g.code, g.event, string_agg(DISTINCT c.code, ',' ORDER BY c.code) AS reasons
    FROM carrier AS c
    JOIN found AS g
      ON g.hand_id = c.hand_id AND g.code = c.counted_in
     AND (g.event = c.event OR (c.counted_in = 'SETTLE_DELTA' AND g.event IS NULL))
    GROUP BY c.hand_id, g.code, g.event
),

priced AS (  -- logic
    SELECT
        f.*,
        c.counted_in,
        r.reasons,
        CASE WHEN f.seat IS NOT NULL THEN f.players[f.seat + 1] END AS player,
        CASE WHEN c.counted_in IS NOT NULL THEN 0 ELSE coalesce(
            f.money,
            CASE WHEN f.code LIKE 'SCORE\_%' ESCAPE '\' OR f.code LIKE 'SETTLE\_%' ESCAPE '\' THEN NULL ELSE s.stake END,
            0
        ) END::BIGINT AS money_at_stake
    FROM found AS f
    LEFT JOIN stake AS s ON s.hand_id = f.hand_id
    LEFT JOIN carrier AS c ON c.hand_id = f.hand_id AND c.event = f.event AND c.code = f.code
    LEFT JOIN reasoned AS r
      ON r.hand_id = f.hand_id AND r.code = f.code AND r.event IS NOT DISTINCT FROM f.event
)

SELECT  -- final
    hand_id, code, severity, event, seat, player, expected, actual, money_at_stake AS money, message, position,
    counted_in, reasons, table_id, strftime(local_time(played_at, utc_offset), '%Y-%m') AS month
FROM priced
ORDER BY money DESC, hand_id, event NULLS FIRST, code, seat NULLS FIRST, message

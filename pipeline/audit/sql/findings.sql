-- findings: every validator issue of a stored hand as an audit finding, with the money involved.
-- money: for a scoring or settlement difference, the points it moves (the validator's issues.money);
-- for a rule violation, the points the source system settled in that hand (the money its verdict rests on).
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

priced AS (  -- logic
    SELECT
        f.*,
        CASE WHEN f.seat IS NOT NULL THEN f.players[f.seat + 1] END AS player,
        coalesce(
            f.money,
            CASE WHEN f.code LIKE 'SCORE\_%' ESCAPE '\' OR f.code LIKE 'SETTLE\_%' ESCAPE '\' THEN NULL ELSE s.stake END,
            0
        )::BIGINT AS money_at_stake
    FROM found AS f
    LEFT JOIN stake AS s ON s.hand_id = f.hand_id
)

SELECT  -- final
    hand_id, code, severity, event, seat, player, expected, actual, money_at_stake AS money, message, position,
    table_id, strftime(local_time(played_at, utc_offset), '%Y-%m') AS month
FROM priced
ORDER BY money DESC, hand_id, event NULLS FIRST, code, seat NULLS FIRST, message

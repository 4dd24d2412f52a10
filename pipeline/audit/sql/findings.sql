-- findings: every validator issue of a stored hand as an audit finding, with the money involved.
-- money: for a scoring or settlement difference, the points it moves (the validator's issues.money);
-- for a rule violation, the points the source system settled in that hand (the money its verdict rests on).
-- One wrong payment is counted once. A win paid wrongly is reported as SCORE_FAN (its fan), SCORE_POINTS
-- (its points) and the payment itself: SETTLE_AMOUNT/SETTLE_* at the win's event where the record itemises
-- payments, else SETTLE_DELTA on each seat whose delta is wrong (the payer's and the winner's side of the
-- same points). The money stays on the payment: a SETTLE_* at the win's event, else the hand's SETTLE_DELTA
-- on the seats that got too much (claimed above the rules: the moved points counted once), else SCORE_POINTS,
-- else SCORE_FAN. The findings behind it have money 0 and reason_of the code that carries it.
-- A hand's stake is counted once too: where a hand has several rule violations (a false win and a wrong dealer,
-- or two session findings), the first (errors first, then by event, code, seat, message) carries the stake and
-- the others have money 0 and reason_of that finding's code.
-- position: the replay's state where a rule violation stopped it (null for other findings).
-- month: of the hand's local time (the record's own offset, or --tz: pipeline/analytics/sql/local_time.sql).
-- base: the hand's base (底, hands.base): its money is a multiple of it, and money of hands of different bases is
-- compared in bases (money ÷ base: 1,000 points at majsoul's base 1,000 rank with 1 point at chengdu's base 1).
-- Ranked by money at stake in bases, then in points, then hand, event, code, seat and message (a total order:
-- the same on any connection; in a warehouse of one base, the order of the money in points).
WITH
stake AS (  -- claimed money per hand: what the winners of the claimed settlement took
    SELECT hand_id, sum(greatest(coalesce(claimed_delta, delta), 0))::BIGINT AS stake
    FROM player_hands
    GROUP BY hand_id
),

found AS (  -- source: issues with their hand's context
    SELECT
        i.hand_id, i.code, i.severity, i.event, i.seat, i.expected, i.actual, i.message, i.money, i.position,
        h.table_id, h.played_at, h.utc_offset, h.players, h.base
    FROM issues AS i
    JOIN hands AS h ON h.hand_id = i.hand_id
),

at_event AS (  -- logic: per hand and event, the itemised payment finding that carries a wrong payment's money
    SELECT
        hand_id, event,
        min(code) FILTER (WHERE code LIKE 'SETTLE\_%' ESCAPE '\' AND money > 0) AS settle_code,
        bool_or(code = 'SCORE_POINTS' AND money > 0) AS has_points
    FROM found
    WHERE event IS NOT NULL
    GROUP BY hand_id, event
),

by_delta AS (  -- logic: hands whose wrong payments show only as wrong deltas
    SELECT DISTINCT hand_id FROM found WHERE code = 'SETTLE_DELTA' AND money > 0
),

sided AS (  -- logic: reason_of for the findings behind a payment
    SELECT
        f.*,
        CASE
            WHEN f.code IN ('SCORE_FAN', 'SCORE_POINTS') AND e.settle_code IS NOT NULL THEN e.settle_code
            WHEN f.code IN ('SCORE_FAN', 'SCORE_POINTS') AND d.hand_id IS NOT NULL THEN 'SETTLE_DELTA'
            WHEN f.code = 'SCORE_FAN' AND e.has_points THEN 'SCORE_POINTS'
            -- the side of a wrong delta that got too little: the same points as the other side's
            WHEN f.code = 'SETTLE_DELTA' AND try_cast(f.actual AS BIGINT) < try_cast(f.expected AS BIGINT)
                THEN 'SETTLE_DELTA'
        END AS reason_of
    FROM found AS f
    LEFT JOIN at_event AS e ON e.hand_id = f.hand_id AND e.event = f.event
    LEFT JOIN by_delta AS d ON d.hand_id = f.hand_id
),

verdicts AS (  -- logic: the rule violations of each hand (money from the hand's stake), the first one carrying it
    SELECT
        f.*,
        f.money IS NULL AND f.reason_of IS NULL
            AND NOT (f.code LIKE 'SCORE\_%' ESCAPE '\' OR f.code LIKE 'SETTLE\_%' ESCAPE '\') AS verdict
    FROM sided AS f
),

carried AS (  -- logic
    SELECT
        f.* REPLACE (
            CASE WHEN f.verdict AND f.at > 1 THEN f.carrier ELSE f.reason_of END AS reason_of
        )
    FROM (
        SELECT
            v.*,
            row_number() OVER w AS at,
            first_value(v.code) OVER w AS carrier
        FROM verdicts AS v
        WINDOW w AS (
            PARTITION BY v.hand_id, v.verdict
            ORDER BY v.severity = 'error' DESC, v.event NULLS LAST, v.code, v.seat NULLS FIRST, v.message
        )
    ) AS f
),

priced AS (  -- logic
    SELECT
        f.*,
        CASE WHEN f.seat IS NOT NULL THEN f.players[f.seat + 1] END AS player,
        CASE WHEN f.reason_of IS NOT NULL THEN 0 ELSE coalesce(
            f.money,
            CASE WHEN f.code LIKE 'SCORE\_%' ESCAPE '\' OR f.code LIKE 'SETTLE\_%' ESCAPE '\' THEN NULL ELSE s.stake END,
            0
        ) END::BIGINT AS money_at_stake
    FROM carried AS f
    LEFT JOIN stake AS s ON s.hand_id = f.hand_id
)

SELECT  -- final
    hand_id, code, severity, event, seat, player, expected, actual, money_at_stake AS money, message, position,
    reason_of, table_id, strftime(local_time(played_at, utc_offset), '%Y-%m') AS month, base::BIGINT AS base
FROM priced
ORDER BY
    money_at_stake::DOUBLE / base DESC, money_at_stake DESC, hand_id, event NULLS FIRST, code, seat NULLS FIRST, message

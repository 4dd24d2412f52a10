-- money_by_reason: points moved by the engine's computed settlement, by reason, replayed hands only.
-- Check: every reason's total is positive; the grand total is the sum of all computed payments.
WITH
source AS (
    SELECT p.reason, p.amount
    FROM payments AS p
    JOIN hands AS h ON h.hand_id = p.hand_id
    WHERE h.replayed AND p.side = 'computed'
)

SELECT reason, count(*) AS payments, sum(amount)::BIGINT AS points
FROM source
GROUP BY reason
ORDER BY reason

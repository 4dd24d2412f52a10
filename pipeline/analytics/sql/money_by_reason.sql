-- money_by_reason: points moved by the engine's computed settlement, by reason, replayed hands only;
-- to_pot: the part paid to nobody (penalties with penalty_to = pot, a null payee), which is why the players'
-- net points then sum to minus it.
-- Check: every reason's total is positive; the grand total is the sum of all computed payments.
WITH
source AS (
    SELECT p.reason, p.amount, p.payee
    FROM payments AS p
    JOIN hands AS h ON h.hand_id = p.hand_id
    WHERE h.replayed AND p.side = 'computed'
)

SELECT
    reason,
    count(*) AS payments,
    sum(amount)::BIGINT AS points,
    coalesce(sum(amount) FILTER (WHERE payee IS NULL), 0)::BIGINT AS to_pot
FROM source
GROUP BY reason
ORDER BY reason

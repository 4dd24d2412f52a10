-- pair_hands: the replayed hands whose hand_id lies in [$lo, $hi] (one run of hands, pair_chunks.sql), numbered
-- as pair_events.sql numbers them (hno), with their players by seat and the end-of-wall payments the screen's
-- channel signal counts: channel has bit 4 × payer + payee set when the payee collected 查叫 or 花猪 money
-- from the payer (computed settlement).
WITH
hands_in AS (
    SELECT hand_id, players, (row_number() OVER (ORDER BY hand_id) - 1)::INTEGER AS hno
    FROM hands
    WHERE replayed AND hand_id BETWEEN $lo AND $hi
),

channels AS (
    SELECT p.hand_id, bit_or(1::INTEGER << (4 * p.payer::INTEGER + p.payee::INTEGER))::INTEGER AS channel
    FROM payments AS p
    WHERE p.hand_id BETWEEN $lo AND $hi AND p.side = 'computed' AND p.reason IN ('cha_jiao', 'hua_zhu')
        AND p.payer IS NOT NULL AND p.payee IS NOT NULL
    GROUP BY p.hand_id
)

SELECT h.hno, h.hand_id, h.players, coalesce(c.channel, 0)::INTEGER AS channel
FROM hands_in AS h
LEFT JOIN channels AS c ON c.hand_id = h.hand_id
ORDER BY h.hno

-- luck_cells: the sums the room's luck is fitted from (player_base.sql, schemas/METRICS.md#luck), one row per cell
-- of seat-hands dealt alike: scale group (profile, base), suits, dealer or not, starting shanten. Every column is
-- a count or a sum over seat-hands, so the cells of runs of hands add up to the warehouse's (pipeline/analytics/
-- queries.py adds them run by run, pipeline/analytics/runs.py); player_base.sql fits the luck from their totals.
-- Over every replayed seat-hand with a known deal (its net in bases: delta / base), in scope (not only a player's).
-- The draw-luck sums are over the seat-hands that carry draw luck (draw_luck_win not null, as ingest stores all six
-- together or none), per feature k: x_k = draw_luck_k, net_x_k = sum(net * x_k), x_k = sum(x_k), xx_k = sum(x_k^2):
-- the slope of the net less the deal's expectation e on x_k is (sum(net * x_k) - e * sum(x_k)) / sum(x_k^2).
-- Run by DuckDB, or by Spark SQL with `stats --engine spark` (pipeline/analytics/spark.py): the SQL both read alike.
-- Checks: n >= drawn; sum(n) = the replayed seat-hands with a known deal.
WITH
dealt_net AS (  -- source: every replayed seat-hand with a known deal, its net in bases
    SELECT
        coalesce(ph.profile, '') AS profile,
        h.base,
        coalesce(h.suits, '') AS suits,
        ph.dealer,
        ph.deal_shanten,
        ph.delta / h.base AS net,
        ph.draw_luck_win,
        ph.draw_luck_paid,
        ph.draw_luck_ready,
        ph.draw_luck_rivals,
        ph.draw_luck_kong,
        ph.draw_luck_fed
    FROM player_hands AS ph
    JOIN hands AS h ON h.hand_id = ph.hand_id
    WHERE ph.replayed AND ph.deal_shanten IS NOT NULL
)

SELECT  -- final
    profile,
    base,
    suits,
    dealer,
    deal_shanten,
    count(*) AS n,
    sum(net) AS net_sum,
    count(draw_luck_win) AS drawn,
    sum(net * draw_luck_win) AS net_x_win,
    sum(draw_luck_win) AS x_win,
    sum(draw_luck_win * draw_luck_win) AS xx_win,
    sum(net * draw_luck_paid) FILTER (WHERE draw_luck_win IS NOT NULL) AS net_x_paid,
    sum(draw_luck_paid) FILTER (WHERE draw_luck_win IS NOT NULL) AS x_paid,
    sum(draw_luck_paid * draw_luck_paid) FILTER (WHERE draw_luck_win IS NOT NULL) AS xx_paid,
    sum(net * draw_luck_ready) FILTER (WHERE draw_luck_win IS NOT NULL) AS net_x_ready,
    sum(draw_luck_ready) FILTER (WHERE draw_luck_win IS NOT NULL) AS x_ready,
    sum(draw_luck_ready * draw_luck_ready) FILTER (WHERE draw_luck_win IS NOT NULL) AS xx_ready,
    sum(net * draw_luck_rivals) FILTER (WHERE draw_luck_win IS NOT NULL) AS net_x_rivals,
    sum(draw_luck_rivals) FILTER (WHERE draw_luck_win IS NOT NULL) AS x_rivals,
    sum(draw_luck_rivals * draw_luck_rivals) FILTER (WHERE draw_luck_win IS NOT NULL) AS xx_rivals,
    sum(net * draw_luck_kong) FILTER (WHERE draw_luck_win IS NOT NULL) AS net_x_kong,
    sum(draw_luck_kong) FILTER (WHERE draw_luck_win IS NOT NULL) AS x_kong,
    sum(draw_luck_kong * draw_luck_kong) FILTER (WHERE draw_luck_win IS NOT NULL) AS xx_kong,
    sum(net * draw_luck_fed) FILTER (WHERE draw_luck_win IS NOT NULL) AS net_x_fed,
    sum(draw_luck_fed) FILTER (WHERE draw_luck_win IS NOT NULL) AS x_fed,
    sum(draw_luck_fed * draw_luck_fed) FILTER (WHERE draw_luck_win IS NOT NULL) AS xx_fed
FROM dealt_net
GROUP BY profile, base, suits, dealer, deal_shanten
ORDER BY profile, base, suits, dealer, deal_shanten

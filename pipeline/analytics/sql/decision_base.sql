-- decision_base: per player (and group), the counts the decision metrics are built from (schemas/METRICS.md,
-- Decisions): sums of the rows `xuezhan review` stored in decision_tallies (pipeline/audit/tallies.py), one per
-- player-hand whose tiles the record shows (every seat of levels full and dealt, an observer's own seat), of the
-- review version $version only. Parameters: $by and $player as player_base.sql's (the group's expression is
-- player_base.sql's too); only hands whose replay reached the end count, as there.
-- reviewed_hands: the player-hands reviewed (0 rows for a player: not reviewed, every figure unknown).
-- avoidable_per100_*: the avoidable deal-ins of each hand times 100, summed and squared (a mean per 100 hands).
-- void_hands / void_kept_hands: hands in which it discarded while holding a void-suit tile / and at least once
-- discarded another suit then (only where keeping one is a choice: void_held not null).
-- Checks: judged_discards >= judged_efficient; deal_ins >= avoidable_deal_ins; win_chances >= missed_wins;
-- void_hands >= void_kept_hands; reviewed_hands >= void_hands.
SELECT
    t.player,
    CASE $by
        WHEN 'seat' THEN CAST(ph.seat AS VARCHAR)
        WHEN 'dealer' THEN CASE WHEN ph.dealer THEN 'dealer' ELSE 'not dealer' END
        WHEN 'profile' THEN ph.profile
        WHEN 'month' THEN strftime(local_time(h.played_at, h.utc_offset), '%Y-%m')
        ELSE 'all'
    END AS grp,
    count(*) AS reviewed_hands,
    CAST(coalesce(sum(t.decisions), 0) AS BIGINT) AS decisions,
    CAST(coalesce(sum(t.judged_discards), 0) AS BIGINT) AS judged_discards,
    CAST(coalesce(sum(t.judged_efficient), 0) AS BIGINT) AS judged_efficient,
    CAST(coalesce(sum(t.deal_ins), 0) AS BIGINT) AS reviewed_deal_ins,
    CAST(coalesce(sum(t.avoidable_deal_ins), 0) AS BIGINT) AS avoidable_deal_ins,
    100 * CAST(coalesce(sum(t.avoidable_deal_ins), 0) AS BIGINT) AS avoidable_per100_sum,
    10000 * CAST(coalesce(sum(t.avoidable_deal_ins * t.avoidable_deal_ins), 0) AS BIGINT) AS avoidable_per100_sq,
    CAST(coalesce(sum(t.win_chances), 0) AS BIGINT) AS win_chances,
    CAST(coalesce(sum(t.missed_wins), 0) AS BIGINT) AS missed_wins,
    count(*) FILTER (WHERE t.void_held > 0) AS void_hands,
    count(*) FILTER (WHERE t.void_kept > 0) AS void_kept_hands
FROM decision_tallies AS t
JOIN player_hands AS ph ON ph.hand_id = t.hand_id AND ph.seat = t.seat
JOIN hands AS h ON h.hand_id = t.hand_id
WHERE t.version = $version AND ph.replayed AND ($player IS NULL OR t.player = $player)
GROUP BY ALL
ORDER BY t.player, grp
